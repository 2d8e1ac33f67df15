// Package hotreload is how a running sluice changes its configuration or
// its binary without dropping anything. A reload: the supervisor sends a
// validated configuration to every worker over its control socket (this
// file's frames), each worker swaps an immutable route table behind an
// atomic pointer, and the cells of the shared region — which a reload must
// not touch — carry on; the cells of names a reload removed are retired and
// freed once nothing can reach them (Retired). An upgrade: a new
// supervisor takes the sockets and the region over (Handover).
package hotreload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxConfig bounds a configuration frame, so a corrupt header cannot make
// a worker allocate without limit.
const MaxConfig = 64 << 20

// WriteConfig sends one configuration frame: "reload GEN NAMELEN DATALEN\n",
// then the configuration's name and its bytes.
func WriteConfig(w io.Writer, name string, data []byte, gen int64) error {
	_, err := fmt.Fprintf(w, "reload %d %d %d\n%s%s", gen, len(name), len(data), name, data)
	return err
}

// ReadConfig reads one configuration frame.
func ReadConfig(r *bufio.Reader) (name string, data []byte, gen int64, err error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", nil, 0, err
	}
	var nameLen, dataLen int
	if _, err := fmt.Sscanf(line, "reload %d %d %d\n", &gen, &nameLen, &dataLen); err != nil {
		return "", nil, 0, fmt.Errorf("hotreload: bad frame header %q", strings.TrimSpace(line))
	}
	if nameLen < 0 || dataLen < 0 || nameLen+dataLen > MaxConfig {
		return "", nil, 0, fmt.Errorf("hotreload: frame of %d+%d bytes refused", nameLen, dataLen)
	}
	buf := make([]byte, nameLen+dataLen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", nil, 0, err
	}
	return string(buf[:nameLen]), buf[nameLen:], gen, nil
}

// WriteReply answers a frame: "ok GEN\n", or "error GEN MESSAGE\n" with the
// message on one line.
func WriteReply(w io.Writer, gen int64, applyErr error) error {
	var err error
	if applyErr == nil {
		_, err = fmt.Fprintf(w, "ok %d\n", gen)
	} else {
		_, err = fmt.Fprintf(w, "error %d %s\n", gen, strings.ReplaceAll(applyErr.Error(), "\n", "; "))
	}
	return err
}

// ReadReply reads the answer to the frame of generation gen: nil for ok,
// else the worker's error.
func ReadReply(r *bufio.Reader, gen int64) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if line == fmt.Sprintf("ok %d\n", gen) {
		return nil
	}
	if msg, ok := strings.CutPrefix(line, fmt.Sprintf("error %d ", gen)); ok {
		return errors.New(strings.TrimSpace(msg))
	}
	return fmt.Errorf("hotreload: unexpected answer %q", strings.TrimSpace(line))
}
