// Package fakenomad is a fake of the part of Nomad's HTTP API sluice uses
// — GET /v1/service/{name}, the native service discovery, and
// GET/PUT /v1/var/{path} with ?cas=, the Variables the fleet's replicas
// exchange their spend through (a PUT whose cas is not the variable's
// modify index, 0 for none, is refused 409 with the variable as it is,
// as Nomad does) — with Nomad's
// blocking-query semantics: every answer carries X-Nomad-Index (and
// X-Nomad-LastContact, X-Nomad-KnownLeader, without which nomad/api
// refuses it); a query with ?index=N waits, up to ?wait=, until the
// service's index passes N. The Nomad agent is not available on the
// machines the tests run on; the shapes follow nomad/api's own types.
package fakenomad

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Server is a running fake Nomad.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	mu   sync.Mutex
	idx  uint64
	regs map[string][]*api.ServiceRegistration // by namespace + "/" + name
	at   map[string]uint64                     // index of each service's last change
	wake chan struct{}                         // closed and replaced on every change
	down bool
	// Queries counts the service queries answered, by service name.
	queries map[string]int
	tokens  []string // the X-Nomad-Token of every query

	vars      map[string]*api.Variable // by namespace + "/" + path
	interfere int                      // PUTs still to meet another writer first (Interfere)
	conflicts int                      // 409s answered
}

// Variable is the items and modify index of the variable at path in
// namespace (nil, 0: none).
func (s *Server) Variable(namespace, path string) (map[string]string, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vars[namespace+"/"+path]
	if v == nil {
		return nil, 0
	}
	items := make(map[string]string, len(v.Items))
	for k, val := range v.Items {
		items[k] = val
	}
	return items, v.ModifyIndex
}

// Interfere makes each of the next n PUTs of a variable meet another
// writer first: the variable gains (or changes) its item "intruder" and
// its modify index moves on, so that the PUT's cas no longer matches.
func (s *Server) Interfere(n int) {
	s.mu.Lock()
	s.interfere = n
	s.mu.Unlock()
}

// Conflicts is how many PUTs were refused 409 (CAS conflicts).
func (s *Server) Conflicts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conflicts
}

// Tokens returns the X-Nomad-Token of every query so far.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokens...)
}

// Start serves on a free loopback port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, idx: 10, regs: map[string][]*api.ServiceRegistration{}, at: map[string]uint64{},
		wake: make(chan struct{}), queries: map[string]int{}, vars: map[string]*api.Variable{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/service/{name}", s.service)
	mux.HandleFunc("GET /v1/var/{path...}", s.readVar)
	mux.HandleFunc("PUT /v1/var/{path...}", s.writeVar)
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln) //nolint:errcheck
	return s, nil
}

// Addr is the value for NOMAD_ADDR.
func (s *Server) Addr() string { return "http://" + s.ln.Addr().String() }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Instance is a registration to publish.
type Instance struct {
	Address string
	Port    int
	Tags    []string
}

// Set replaces the instances of service name in namespace and wakes the
// blocking queries on it.
func (s *Server) Set(namespace, name string, instances ...Instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idx++
	key := namespace + "/" + name
	var regs []*api.ServiceRegistration
	for i, in := range instances {
		regs = append(regs, &api.ServiceRegistration{
			ID: "_nomad-task-" + strconv.Itoa(i) + "-" + name, ServiceName: name, Namespace: namespace,
			NodeID: "node-" + strconv.Itoa(i), Datacenter: "dc1", JobID: name, AllocID: "alloc-" + strconv.Itoa(i),
			Tags: in.Tags, Address: in.Address, Port: in.Port, CreateIndex: s.idx, ModifyIndex: s.idx,
		})
	}
	s.regs[key], s.at[key] = regs, s.idx
	close(s.wake)
	s.wake = make(chan struct{})
}

// SetDown makes every query fail with a 500 (Nomad unreachable).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	s.down = down
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
}

// Queries is how many queries for service name were answered.
func (s *Server) Queries(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[name]
}

func (s *Server) service(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		ns = "default"
	}
	key := ns + "/" + name
	index, _ := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
	wait := 5 * time.Minute
	if v := r.URL.Query().Get("wait"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			wait = d
		}
	}
	deadline := time.After(wait)
	s.mu.Lock()
	s.tokens = append(s.tokens, r.Header.Get("X-Nomad-Token"))
	// A blocking query: wait while the service is not newer than index.
	for timedOut := false; !s.down && !timedOut && index > 0 && s.at[key] <= index; {
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-deadline:
			timedOut = true
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
	if s.down {
		s.mu.Unlock()
		http.Error(w, "No cluster leader", http.StatusInternalServerError)
		return
	}
	regs := s.regs[key]
	if regs == nil {
		regs = []*api.ServiceRegistration{}
	}
	at := max(s.at[key], 1)
	s.queries[name]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(at, 10))
	w.Header().Set("X-Nomad-LastContact", "0")
	w.Header().Set("X-Nomad-KnownLeader", "true")
	json.NewEncoder(w).Encode(regs) //nolint:errcheck
}

// varKey is a variable's key in vars, and its namespace ("default" when
// the request names none).
func varKey(r *http.Request) (key, ns, path string) {
	ns = r.URL.Query().Get("namespace")
	if ns == "" {
		ns = "default"
	}
	path = r.PathValue("path")
	return ns + "/" + path, ns, path
}

// meta writes the headers nomad/api reads on every answer.
func (s *Server) meta(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(s.idx, 10))
	w.Header().Set("X-Nomad-LastContact", "0")
	w.Header().Set("X-Nomad-KnownLeader", "true")
}

// up records the request's token and, when the fake is down, answers it
// as Nomad without a leader does (s.mu held).
func (s *Server) up(w http.ResponseWriter, r *http.Request) bool {
	s.tokens = append(s.tokens, r.Header.Get("X-Nomad-Token"))
	if s.down {
		http.Error(w, "No cluster leader", http.StatusInternalServerError)
	}
	return !s.down
}

func (s *Server) readVar(w http.ResponseWriter, r *http.Request) {
	key, _, _ := varKey(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up(w, r) {
		return
	}
	s.meta(w)
	v := s.vars[key]
	if v == nil {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("variable not found")) //nolint:errcheck
		return
	}
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}

func (s *Server) writeVar(w http.ResponseWriter, r *http.Request) {
	key, ns, path := varKey(r)
	var in api.Variable
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&in); err != nil {
		http.Error(w, "bad variable: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up(w, r) {
		return
	}
	now := time.Now().UnixNano()
	if s.interfere > 0 { // another writer lands first
		s.interfere--
		s.idx++
		v := s.vars[key]
		if v == nil {
			v = &api.Variable{Namespace: ns, Path: path, Items: api.VariableItems{}, CreateIndex: s.idx, CreateTime: now}
			s.vars[key] = v
		}
		v.Items["intruder"] = strconv.FormatUint(s.idx, 10)
		v.ModifyIndex, v.ModifyTime = s.idx, now
	}
	cur := s.vars[key]
	if cas := r.URL.Query().Get("cas"); cas != "" {
		want, err := strconv.ParseUint(cas, 10, 64)
		have := uint64(0)
		if cur != nil {
			have = cur.ModifyIndex
		}
		if err != nil || want != have {
			s.conflicts++
			s.meta(w)
			w.WriteHeader(http.StatusConflict)
			if cur == nil {
				cur = &api.Variable{Namespace: ns, Path: path}
			}
			json.NewEncoder(w).Encode(cur) //nolint:errcheck
			return
		}
	}
	s.idx++
	v := &api.Variable{Namespace: ns, Path: path, Items: in.Items, CreateIndex: s.idx, CreateTime: now, ModifyIndex: s.idx, ModifyTime: now}
	if cur != nil {
		v.CreateIndex, v.CreateTime = cur.CreateIndex, cur.CreateTime
	}
	s.vars[key] = v
	s.meta(w)
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}
