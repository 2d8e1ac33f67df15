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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sluice-gw/sluice/config"
)

// MaxConfig bounds a configuration frame, so a corrupt header cannot make
// a worker allocate without limit.
const MaxConfig = 64 << 20

// Frame is one configuration as the supervisor hands it to a worker: the
// file's name and bytes, its generation, the backends service discovery
// found (JSON of config.Discovered; empty: none), and the bytes of the TLS
// files it names as the supervisor's validation read them (JSON of
// config.Files; empty: none), so that every worker serves what was
// validated, even if a file changed since.
type Frame struct {
	Name       string
	Data       []byte
	Gen        int64
	Discovered []byte
	Files      []byte
}

// FilesOf encodes the files of cfg's TLS listeners for Frame.Files: the
// workers' own, not admin_tls's (the admin key stays in the supervisor).
// Paths and bytes both as JSON's base64, so that any path survives.
func FilesOf(cfg *config.Config) []byte {
	var files []frameFile
	seen := map[string]bool{}
	add := func(path string) {
		if b, ok := cfg.Files[path]; ok && !seen[path] {
			seen[path] = true
			files = append(files, frameFile{Path: []byte(path), Data: b})
		}
	}
	for _, l := range cfg.Listen {
		if l.TLS == nil {
			continue
		}
		for _, c := range l.TLS.Certificates {
			add(c.Cert)
			add(c.Key)
		}
		if l.TLS.ClientCA != "" {
			add(l.TLS.ClientCA)
		}
	}
	if len(files) == 0 {
		return nil
	}
	b, _ := json.Marshal(files) // byte slices always encode
	return b
}

// frameFile is one file of Frame.Files.
type frameFile struct{ Path, Data []byte }

// WriteConfig sends one frame: "reload GEN NAMELEN DATALEN DISCLEN FILESLEN\n",
// then the name, the bytes, the discovered backends and the files.
func WriteConfig(w io.Writer, f Frame) error {
	_, err := fmt.Fprintf(w, "reload %d %d %d %d %d\n%s%s%s%s", f.Gen, len(f.Name), len(f.Data), len(f.Discovered), len(f.Files),
		f.Name, f.Data, f.Discovered, f.Files)
	return err
}

// ReadConfig reads one frame.
func ReadConfig(r *bufio.Reader) (Frame, error) {
	var f Frame
	line, err := r.ReadString('\n')
	if err != nil {
		return f, err
	}
	var nameLen, dataLen, discLen, filesLen int
	if _, err := fmt.Sscanf(line, "reload %d %d %d %d %d\n", &f.Gen, &nameLen, &dataLen, &discLen, &filesLen); err != nil {
		return f, fmt.Errorf("hotreload: bad frame header %q", strings.TrimSpace(line))
	}
	if nameLen < 0 || dataLen < 0 || discLen < 0 || filesLen < 0 || nameLen > MaxConfig || dataLen > MaxConfig ||
		discLen > MaxConfig || filesLen > MaxConfig || nameLen+dataLen+discLen+filesLen > MaxConfig {
		return f, fmt.Errorf("hotreload: frame of %d+%d+%d+%d bytes refused", nameLen, dataLen, discLen, filesLen)
	}
	buf := make([]byte, nameLen+dataLen+discLen+filesLen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return f, err
	}
	f.Name, buf = string(buf[:nameLen]), buf[nameLen:]
	f.Data, buf = buf[:dataLen], buf[dataLen:]
	f.Discovered, f.Files = buf[:discLen], buf[discLen:]
	return f, nil
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

// Config decodes the frame: the file, validated (its TLS files from the
// frame), with the discovered backends in place.
func (f Frame) Config() (*config.Config, error) {
	var files config.Files
	if len(f.Files) > 0 {
		var list []frameFile
		if err := json.Unmarshal(f.Files, &list); err != nil {
			return nil, fmt.Errorf("hotreload: TLS files: %w", err)
		}
		files = make(config.Files, len(list))
		for _, ff := range list {
			files[string(ff.Path)] = ff.Data
		}
	}
	cfg, err := config.ParseFrame(f.Name, f.Data, files)
	if err != nil || len(f.Discovered) == 0 {
		return cfg, err
	}
	var d config.Discovered
	if err := json.Unmarshal(f.Discovered, &d); err != nil {
		return nil, fmt.Errorf("hotreload: discovered backends: %w", err)
	}
	return cfg.WithDiscovered(d), nil
}
