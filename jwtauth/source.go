package jwtauth

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Source is where a Verifier's key set comes from and how often it is
// read again.
type Source struct {
	File    string        // a JWKS file
	URL     string        // or a JWKS URL (http or https)
	Refresh time.Duration // how often it is read again
}

// Refresh bounds.
const (
	// FetchTimeout bounds one fetch of a key set URL, connect to last byte.
	FetchTimeout = 10 * time.Second
	// StartTimeout bounds the first load at start: a provider that does
	// not answer delays a worker's start by this much at most; tokens are
	// then refused until a later try succeeds.
	StartTimeout = 5 * time.Second
	// minUnknownKeyRefresh is how soon after one load a token with an
	// unknown kid may make the source load again: a rotation is picked up
	// within it, and a flood of made-up kids costs the provider one fetch
	// per interval.
	minUnknownKeyRefresh = 10 * time.Second
	// retryMin is the first wait after a failed load; it doubles up to
	// the refresh interval.
	retryMin = time.Second
)

// Loader keeps a Verifier's key set loaded from a Source: once at start,
// then every Refresh, after a failure with backoff, and early (at most
// every minUnknownKeyRefresh) when a token names a key the set lacks. A
// load that fails keeps the set that was loaded before.
type Loader struct {
	src    Source
	v      *Verifier
	log    *slog.Logger
	client *http.Client

	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	last     []byte    // the document last loaded
	lastLoad time.Time // when a load last ran
	lastErr  error
}

// NewLoader loads src into v once (bounded by StartTimeout) and returns
// the loader; Start keeps it loaded. The first load's error is returned
// with the loader: the caller may go on without keys (tokens are refused
// until a load succeeds).
func NewLoader(src Source, v *Verifier, log *slog.Logger) (*Loader, error) {
	l := &Loader{src: src, v: v, log: log, client: &http.Client{Timeout: FetchTimeout},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	v.onUnknownKey = l.Wake
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	return l, l.load(ctx)
}

// Start runs the refresh loop until Close.
func (l *Loader) Start() { go l.run() }

// Close ends the refresh loop. The verifier keeps the last set.
func (l *Loader) Close() {
	l.closeOnce.Do(func() {
		close(l.stop)
		<-l.done
	})
}

// Wake asks for a load sooner than the next refresh (a token named an
// unknown key, or the configuration was reloaded).
func (l *Loader) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Reload loads the source now (a configuration reload: SIGHUP reads the
// files again).
func (l *Loader) Reload() error {
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	return l.load(ctx)
}

// Err is the last load's error, nil if it succeeded.
func (l *Loader) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}

func (l *Loader) run() {
	defer close(l.done)
	wait := l.src.Refresh
	if l.Err() != nil {
		wait = retryMin
	}
	for {
		t := time.NewTimer(wait)
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-l.wake:
			t.Stop()
			if early := minUnknownKeyRefresh - time.Since(l.loadedAt()); early > 0 {
				// Too soon: wait out the interval, then load.
				select {
				case <-l.stop:
					return
				case <-time.After(early):
				}
			}
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), FetchTimeout)
		err := l.load(ctx)
		cancel()
		switch {
		case err == nil:
			wait = l.src.Refresh
		case wait >= l.src.Refresh:
			wait = retryMin
		default:
			wait = min(2*wait, l.src.Refresh)
		}
	}
}

func (l *Loader) loadedAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastLoad
}

// load reads the source once and, when it reads as a usable set that
// differs from the last, makes it the verifier's.
func (l *Loader) load(ctx context.Context) error {
	data, err := l.read(ctx)
	var keys []jose.JSONWebKey
	var skipped []string
	if err == nil {
		keys, skipped, err = ParseSet(data, l.v.Algorithms())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastLoad, l.lastErr = time.Now(), err
	if err != nil {
		l.log.Error("jwt: the key set could not be loaded; the last one loaded is kept", "source", l.where(), "error", err, "have_keys", l.v.HasKeys())
		return err
	}
	if string(data) == string(l.last) {
		return nil
	}
	for _, s := range skipped {
		l.log.Warn("jwt: a key of the key set is not used", "source", l.where(), "key", s)
	}
	l.last = data
	l.v.SetKeys(keys)
	l.log.Info("jwt: key set loaded", "source", l.where(), "keys", len(keys))
	return nil
}

func (l *Loader) where() string {
	if l.src.File != "" {
		return l.src.File
	}
	return l.src.URL
}

// read is the source's document, bounded by MaxSetBytes.
func (l *Loader) read(ctx context.Context) ([]byte, error) {
	if l.src.File != "" {
		f, err := os.Open(l.src.File)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readBounded(f)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.src.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/jwk-set+json")
	res, err := l.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", l.src.URL, res.Status)
	}
	return readBounded(res.Body)
}

func readBounded(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSetBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSetBytes {
		return nil, fmt.Errorf("the key set is more than %d bytes", MaxSetBytes)
	}
	return data, nil
}
