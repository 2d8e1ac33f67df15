package fakevllm

import (
	"strings"
	"testing"
)

// Each of vLLM's other endpoints answers its shape, on every path vLLM has.
func TestPoolingEndpoints(t *testing.T) {
	s := start(t, Options{Words: []string{"a", "b"}})
	for _, path := range []string{"/rerank", "/v1/rerank", "/v2/rerank"} {
		resp, body := call(t, s, "POST", path, `{"model":"r","query":"q","documents":["d0","d1","d2"],"top_n":2}`)
		m := decode(t, body)
		results := m["results"].([]any)
		if resp.StatusCode != 200 || !strings.HasPrefix(m["id"].(string), "score-") || m["model"] != "r" || len(results) != 2 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		first, second := results[0].(map[string]any), results[1].(map[string]any)
		if first["relevance_score"].(float64) < second["relevance_score"].(float64) {
			t.Fatal("rerank results are sorted by score")
		}
		doc := first["document"].(map[string]any)
		if doc["text"] != "d"+itoaF(first["index"]) || doc["multi_modal"] != nil {
			t.Fatal(body)
		}
		if u := m["usage"].(map[string]any); u["prompt_tokens"] == nil || u["total_tokens"] != u["prompt_tokens"] || len(u) != 2 {
			t.Fatal(body)
		}
	}
	// The same texts score the same.
	_, b1 := call(t, s, "POST", "/rerank", `{"model":"r","query":"q","documents":["d0","d1","d2"]}`)
	_, b2 := call(t, s, "POST", "/rerank", `{"model":"r","query":"q","documents":["d0","d1","d2"]}`)
	if r1, r2 := decode(t, b1)["results"], decode(t, b2)["results"]; len(r1.([]any)) != 3 || itoaF(r1.([]any)[0].(map[string]any)["index"]) != itoaF(r2.([]any)[0].(map[string]any)["index"]) {
		t.Fatal(b1, b2)
	}

	for _, c := range []struct{ path, body string }{
		{"/score", `{"model":"r","text_1":"q","text_2":["a","b"]}`},
		{"/v1/score", `{"model":"r","queries":["q1","q2"],"documents":["a","b"]}`},
		{"/score", `{"model":"r","data_1":"q","data_2":["a","b"]}`},
	} {
		resp, body := call(t, s, "POST", c.path, c.body)
		m := decode(t, body)
		data := m["data"].([]any)
		if resp.StatusCode != 200 || m["object"] != "list" || len(data) != 2 || data[1].(map[string]any)["object"] != "score" ||
			data[1].(map[string]any)["index"] != 1.0 || m["usage"].(map[string]any)["completion_tokens"] != 0.0 {
			t.Fatalf("%s: %d %s", c.path, resp.StatusCode, body)
		}
	}
	if resp, _ := call(t, s, "POST", "/score", `{"model":"r","text_1":["a","b","c"],"text_2":["a","b"]}`); resp.StatusCode != 400 {
		t.Fatal("3:2 scores")
	}

	resp, body := call(t, s, "POST", "/tokenize", `{"model":"r","prompt":"hello world","return_token_strs":true}`)
	m := decode(t, body)
	if resp.StatusCode != 200 || m["count"].(float64) != float64(len(m["tokens"].([]any))) || m["max_model_len"] != 32768.0 ||
		len(m["token_strs"].([]any)) != len(m["tokens"].([]any)) {
		t.Fatal(body)
	}
	if _, body = call(t, s, "POST", "/tokenize", `{"model":"r","messages":[{"role":"user","content":"hi"}]}`); decode(t, body)["token_strs"] != nil {
		t.Fatal(body)
	}
	if _, body = call(t, s, "POST", "/detokenize", `{"model":"r","tokens":[5,6,7]}`); body != `{"prompt":"a b a"}` {
		t.Fatal(body)
	}

	_, body = call(t, s, "POST", "/pooling", `{"model":"r","input":["x","y"]}`)
	m = decode(t, body)
	if !strings.HasPrefix(m["id"].(string), "pool-") || len(m["data"].([]any)) != 2 || m["data"].([]any)[0].(map[string]any)["object"] != "pooling" {
		t.Fatal(body)
	}
	_, body = call(t, s, "POST", "/classify", `{"model":"r","input":"x"}`)
	m = decode(t, body)
	d := m["data"].([]any)[0].(map[string]any)
	if !strings.HasPrefix(m["id"].(string), "classify-") || d["num_classes"] != 2.0 || len(d["probs"].([]any)) != 2 || d["label"] == nil {
		t.Fatal(body)
	}

	rec := s.Received()
	if len(rec) != 14 || rec[0].Path != "/rerank" || rec[0].Model != "r" || rec[0].FirstContent != "q" || rec[len(rec)-1].Path != "/classify" {
		t.Fatalf("%d records: %+v", len(rec), rec[0])
	}
}

func itoaF(v any) string {
	switch v {
	case 0.0:
		return "0"
	case 1.0:
		return "1"
	case 2.0:
		return "2"
	}
	return "?"
}
