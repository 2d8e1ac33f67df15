package fakevllm

// vLLM's other endpoints that take a model: scoring, reranking,
// tokenizing, pooling and classifying. Small answers in vLLM's shapes,
// from its sources (github.com/vllm-project/vllm, main of spring 2026):
//
//   - vllm/entrypoints/pooling/scoring/api_router.py (commit facb56e2):
//     POST /score and /v1/score; POST /rerank, /v1/rerank and /v2/rerank.
//   - vllm/entrypoints/pooling/scoring/protocol.py (commit 53158688) and
//     serving.py (commit a1140c1b): ScoreResponse {"id":"score-…","object":
//     "list","created","model","data":[{"index","object":"score","score"}],
//     "usage":UsageInfo}; RerankResponse {"id":"score-…","model","usage":
//     {"prompt_tokens","total_tokens"},"results":[{"index","document":
//     {"text","multi_modal"},"relevance_score"}]}, results sorted by score,
//     cut to top_n when it is set; score's inputs are queries/documents,
//     queries/items, data_1/data_2 or text_1/text_2, 1:N or N:N.
//   - vllm/entrypoints/serve/tokenize/api_router.py (commit b91ee1b4) and
//     protocol.py (commit 343bacaf): POST /tokenize {"count","max_model_len",
//     "tokens","token_strs"} and POST /detokenize {"prompt"} (no /v1).
//   - vllm/entrypoints/pooling/pooling/api_router.py (commit f6e93254) and
//     protocol.py (commit 343bacaf): POST /pooling {"id":"pool-…","object":
//     "list","created","model","data":[{"index","object":"pooling","data"}],
//     "usage"}.
//   - vllm/entrypoints/pooling/classify/api_router.py (commit 3de3fd69) and
//     protocol.py (commit dff4cad3): POST /classify {"id":"classify-…",
//     "object":"list","created","model","data":[{"index","label","probs",
//     "num_classes"}],"usage"}.
//
// Token counts are the fake's rough one (the body's length / 4); scores
// are a hash of the texts, the same for the same texts.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/tidwall/gjson"
)

func (s *Server) routePooling(mux *http.ServeMux) {
	for _, p := range []string{"/score", "/v1/score"} {
		mux.HandleFunc("POST "+p, s.pooled(s.score))
	}
	for _, p := range []string{"/rerank", "/v1/rerank", "/v2/rerank"} {
		mux.HandleFunc("POST "+p, s.pooled(s.rerank))
	}
	mux.HandleFunc("POST /tokenize", s.pooled(s.tokenize))
	mux.HandleFunc("POST /detokenize", s.pooled(s.detokenize))
	mux.HandleFunc("POST /pooling", s.pooled(s.pooling))
	mux.HandleFunc("POST /classify", s.pooled(s.classify))
}

// pooled wraps an endpoint that answers at once with JSON: answer builds
// it from the request, or writes an error and returns nil.
func (s *Server) pooled(answer func(w http.ResponseWriter, req request, body []byte) []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.running.Add(1)
		defer s.running.Add(-1)
		req, body, ok := s.begin(w, r, false, writeError)
		if !ok || !s.await(w, r, false) {
			return
		}
		if a := answer(w, req, body); a != nil {
			writeAnswer(w, r, a)
		}
	}
}

// fakeScore is a score in [0, 1) for a pair of texts, a hash of them.
func fakeScore(a, b string) float64 {
	h := sha256.Sum256([]byte(a + "\x00" + b))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
}

// inputs is a ScoreInput | list[ScoreInput] (or a pooling input) as a list.
func inputs(v gjson.Result) []gjson.Result {
	if v.IsArray() {
		return v.Array()
	}
	if v.Exists() {
		return []gjson.Result{v}
	}
	return nil
}

// promptUsage is vLLM's UsageInfo of a request without output.
func promptUsage(body []byte) json.RawMessage {
	return json.RawMessage(usageJSON(len(body)/4, 0, -1))
}

func modelName(req request) string {
	if req.Model == "" {
		return "fake"
	}
	return req.Model
}

func (s *Server) score(w http.ResponseWriter, req request, body []byte) []byte {
	var d1, d2 []gjson.Result
	for _, k := range [][2]string{{"queries", "documents"}, {"queries", "items"}, {"data_1", "data_2"}, {"text_1", "text_2"}} {
		if a, b := gjson.GetBytes(body, k[0]), gjson.GetBytes(body, k[1]); a.Exists() && b.Exists() {
			d1, d2 = inputs(a), inputs(b)
			break
		}
	}
	if len(d1) == 0 || len(d2) == 0 || (len(d1) != 1 && len(d1) != len(d2)) {
		writeError(w, http.StatusBadRequest, "Input lengths must be either 1:1, 1:N or N:N")
		return nil
	}
	type scoreData struct {
		Index  int     `json:"index"`
		Object string  `json:"object"`
		Score  float64 `json:"score"`
	}
	data := make([]scoreData, len(d2))
	for i, d := range d2 {
		q := d1[0]
		if len(d1) > 1 {
			q = d1[i]
		}
		data[i] = scoreData{i, "score", fakeScore(q.Raw, d.Raw)}
	}
	return listAnswer("score", req, data, body)
}

func (s *Server) rerank(w http.ResponseWriter, req request, body []byte) []byte {
	query, docs := gjson.GetBytes(body, "query"), inputs(gjson.GetBytes(body, "documents"))
	if !query.Exists() || len(docs) == 0 {
		writeError(w, http.StatusBadRequest, "a rerank request needs a query and documents")
		return nil
	}
	type document struct {
		Text       json.RawMessage `json:"text"`
		MultiModal json.RawMessage `json:"multi_modal"`
	}
	type result struct {
		Index          int      `json:"index"`
		Document       document `json:"document"`
		RelevanceScore float64  `json:"relevance_score"`
	}
	results := make([]result, len(docs))
	for i, d := range docs {
		doc := document{Text: json.RawMessage("null"), MultiModal: json.RawMessage("null")}
		if d.Type == gjson.String {
			doc.Text = json.RawMessage(d.Raw)
		} else {
			doc.MultiModal = rawOr([]byte(d.Raw), "content", "[]")
		}
		results[i] = result{i, doc, fakeScore(query.Raw, d.Raw)}
	}
	slices.SortStableFunc(results, func(a, b result) int {
		switch {
		case a.RelevanceScore > b.RelevanceScore:
			return -1
		case a.RelevanceScore < b.RelevanceScore:
			return 1
		}
		return 0
	})
	if n := int(gjson.GetBytes(body, "top_n").Int()); n > 0 && n < len(results) {
		results = results[:n]
	}
	p := len(body) / 4
	return marshal(struct {
		ID      string         `json:"id"`
		Model   string         `json:"model"`
		Usage   map[string]int `json:"usage"`
		Results []result       `json:"results"`
	}{"score-" + randomUUID(), modelName(req), map[string]int{"prompt_tokens": p, "total_tokens": p}, results})
}

func (s *Server) tokenize(w http.ResponseWriter, req request, body []byte) []byte {
	if !gjson.GetBytes(body, "prompt").Exists() && !gjson.GetBytes(body, "messages").Exists() {
		writeError(w, http.StatusBadRequest, "a tokenize request needs a prompt or messages")
		return nil
	}
	n := max(len(body)/4, 1)
	tokens := make([]int, n)
	var strs []string
	for i := range tokens {
		tokens[i] = 1000 + i
		if gjson.GetBytes(body, "return_token_strs").Bool() {
			strs = append(strs, s.word(i))
		}
	}
	return marshal(struct {
		Count       int      `json:"count"`
		MaxModelLen int      `json:"max_model_len"`
		Tokens      []int    `json:"tokens"`
		TokenStrs   []string `json:"token_strs"`
	}{n, maxModelLen, tokens, strs})
}

func (s *Server) detokenize(w http.ResponseWriter, req request, body []byte) []byte {
	tokens := gjson.GetBytes(body, "tokens")
	if !tokens.IsArray() {
		writeError(w, http.StatusBadRequest, "a detokenize request needs tokens")
		return nil
	}
	var text []byte
	for i := range tokens.Array() {
		text = append(text, s.word(i)...)
	}
	return marshal(struct {
		Prompt string `json:"prompt"`
	}{string(text)})
}

// poolInputs is the number of inputs of a pooling or classify request.
func poolInputs(body []byte) int {
	in := gjson.GetBytes(body, "input")
	if in.IsArray() && len(in.Array()) > 0 && in.Array()[0].Type != gjson.Number {
		return len(in.Array()) // a list of texts (or of token lists)
	}
	return 1 // a text, a token list, or messages
}

func (s *Server) pooling(w http.ResponseWriter, req request, body []byte) []byte {
	type item struct {
		Index  int       `json:"index"`
		Object string    `json:"object"`
		Data   []float64 `json:"data"`
	}
	data := make([]item, poolInputs(body))
	for i := range data {
		data[i] = item{i, "pooling", []float64{0.1, -0.2, 0.3, 0.05}}
	}
	return listAnswer("pool", req, data, body)
}

func (s *Server) classify(w http.ResponseWriter, req request, body []byte) []byte {
	type item struct {
		Index      int       `json:"index"`
		Label      string    `json:"label"`
		Probs      []float64 `json:"probs"`
		NumClasses int       `json:"num_classes"`
	}
	in := inputs(gjson.GetBytes(body, "input"))
	data := make([]item, poolInputs(body))
	for i := range data {
		var text string
		if i < len(in) {
			text = in[i].Raw
		}
		p := fakeScore("classify", text)
		label := "LABEL_0"
		if p < 0.5 {
			label = "LABEL_1"
		}
		data[i] = item{i, label, []float64{p, 1 - p}, 2}
	}
	return listAnswer("classify", req, data, body)
}

// listAnswer is the list envelope vLLM's score, pooling and classify
// answers share: id (prefix-uuid), object "list", created, model, data,
// usage.
func listAnswer(prefix string, req request, data any, body []byte) []byte {
	return marshal(struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Data    any             `json:"data"`
		Usage   json.RawMessage `json:"usage"`
	}{prefix + "-" + randomUUID(), "list", time.Now().Unix(), modelName(req), data, promptUsage(body)})
}
