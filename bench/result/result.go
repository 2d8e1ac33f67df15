// Package result is the one JSON line the load driver (bench/driver)
// prints and the rig (bench/rig) reads.
package result

// Driver is the outcome of one driver run.
type Driver struct {
	Mode         string   `json:"mode"` // "closed" or "open"
	Conns        int      `json:"conns,omitempty"`
	Rate         float64  `json:"rate,omitempty"`
	PromptBytes  int      `json:"prompt_bytes"`
	Stream       bool     `json:"stream"`
	Tokens       int      `json:"tokens"`
	DurationS    float64  `json:"duration_s"`
	Requests     int64    `json:"requests"`
	OK           int64    `json:"ok"`
	Errors       int64    `json:"errors"`
	Events       int64    `json:"events"`
	RPS          float64  `json:"rps"`
	P50Ms        float64  `json:"p50_ms"`
	P90Ms        float64  `json:"p90_ms"`
	P99Ms        float64  `json:"p99_ms"`
	MaxMs        float64  `json:"max_ms"`
	ErrorSamples []string `json:"error_samples,omitempty"`
	// Over https: answers whose connection resumed a session, and the
	// first connection's version, cipher suite and key exchange.
	Resumed int64  `json:"resumed,omitempty"`
	TLS     string `json:"tls,omitempty"`
}
