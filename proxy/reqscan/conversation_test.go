package reqscan

import (
	"strings"
	"testing"
)

// Conversation is the head of the conversation: the messages (or input
// items) up to the end of the first user turn, or a prompt's first
// ConversationCap bytes; Instructions and System are read beside it.
func TestConversationSpan(t *testing.T) {
	long := strings.Repeat("x", ConversationCap+100)
	cases := []struct {
		name, body string
		set        Fields
		want       string // the span's bytes
	}{
		{"system then user", `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"U1"},{"role":"assistant","content":"A"},{"role":"user","content":"U2"}]}`,
			ChatFields, `{"role":"system","content":"S"},{"role":"user","content":"U1"}`},
		{"user first", `{"model":"m","messages":[ {"content":"U1","role":"user"} , {"role":"user","content":"U2"}]}`,
			ChatFields, `{"content":"U1","role":"user"}`},
		{"system, developer, user", `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"developer","content":"D"},{"role":"user","content":[{"type":"text","text":"U1"}]}]}`,
			ChatFields, `{"role":"system","content":"S"},{"role":"developer","content":"D"},{"role":"user","content":[{"type":"text","text":"U1"}]}`},
		{"no user: messages[0]", `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"assistant","content":"A"}]}`,
			ChatFields, `{"role":"system","content":"S"}`},
		{"a role in content is not the message's", `{"model":"m","messages":[{"role":"system","content":[{"role":"user"}]},{"role":"user","content":"U"}]}`,
			ChatFields, `{"role":"system","content":[{"role":"user"}]},{"role":"user","content":"U"}`},
		{"escaped role key: not a user turn", `{"model":"m","messages":[{"role":"system","content":"S"},{"r\u006fle":"user","content":"U"},{"role":"assistant"}]}`,
			ChatFields, `{"role":"system","content":"S"}`},
		{"escaped role value: not a user turn", `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"us\u0065r","content":"U"},{"role":"user"}]}`,
			ChatFields, `{"role":"system","content":"S"},{"role":"us\u0065r","content":"U"},{"role":"user"}`},
		{"non-string role", `{"model":"m","messages":[{"role":1,"content":"S"},{"role":["user"]},{"role":{"x":"user"}},{"role":null}]}`,
			ChatFields, `{"role":1,"content":"S"}`},
		{"duplicate role accepted", `{"model":"m","messages":[{"role":"system","role":"user","content":"S"},{"role":"user"}]}`,
			ChatFields, `{"role":"system","role":"user","content":"S"}`},
		{"non-object message", `{"model":"m","messages":["x",{"role":"user"}]}`,
			ChatFields, `"x",{"role":"user"}`},
		{"messages win over an earlier prompt", `{"model":"m","prompt":"P","messages":[{"role":"user","content":"U"}]}`,
			ChatFields, `{"role":"user","content":"U"}`},
		{"completion prompt", `{"model":"m","prompt":"` + long + `"}`,
			ChatFields, (`"` + long)[:ConversationCap]},
		{"completion prompt, short", `{"model":"m","prompt":"P"}`, ChatFields, `"P"`},
		{"prompt array of strings", `{"model":"m","prompt":["` + long + `","b"]}`,
			ChatFields, (`"` + long)[:ConversationCap]},
		{"prompt token ids", `{"model":"m","prompt":[1,2,3]}`, ChatFields, `[1,2,3]`},
		{"prompt batch of token ids", `{"model":"m","prompt":[[1,2],[3]]}`, ChatFields, `[1,2]`},
		{"embedding input", `{"model":"m","input":["a","b"]}`, ChatFields, `"a"`},
		{"responses string input", `{"model":"m","instructions":"I","input":"` + long + `"}`,
			ResponsesFields, (`"` + long)[:ConversationCap]},
		{"responses items", `{"model":"m","input":[{"role":"user","content":"U1"},{"type":"message","role":"assistant","content":"A"},{"role":"user","content":"U2"}]}`,
			ResponsesFields, `{"role":"user","content":"U1"}`},
		{"responses developer item then user", `{"model":"m","input":[{"role":"developer","content":"D"},{"type":"message","role":"user","content":[{"type":"input_text","text":"U"}]},{"role":"user"}]}`,
			ResponsesFields, `{"role":"developer","content":"D"},{"type":"message","role":"user","content":[{"type":"input_text","text":"U"}]}`},
		{"responses function output item", `{"model":"m","input":[{"type":"function_call_output","output":"O"}]}`,
			ResponsesFields, `{"type":"function_call_output","output":"O"}`},
		{"messages api", `{"model":"m","system":"S","max_tokens":5,"messages":[{"role":"user","content":"U1"},{"role":"assistant","content":"A"}]}`,
			MessagesFields, `{"role":"user","content":"U1"}`},
		{"rerank: first content", `{"model":"m","query":"Q","documents":["a"]}`, PoolingFields, `"Q"`},
		{"empty messages", `{"model":"m","messages":[]}`, ChatFields, ``},
		{"none", `{"model":"m"}`, ChatFields, ``},
	}
	for _, tc := range cases {
		checkSpan(t, "Conversation", tc.name, tc.body, tc.set, tc.want, func(r *Request) Span { return r.Conversation })
	}
}

// FirstUser is the user turn that ends Conversation: what is before it
// (system, developer) is an app's, it and what follows the conversation's.
func TestFirstUserSpan(t *testing.T) {
	cases := []struct {
		name, body string
		set        Fields
		want       string
	}{
		{"system then user", `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"U1"},{"role":"assistant","content":"A"},{"role":"user","content":"U2"}]}`,
			ChatFields, `{"role":"user","content":"U1"}`},
		{"user first", `{"model":"m","messages":[ {"content":"U1","role":"user"} , {"role":"user","content":"U2"}]}`,
			ChatFields, `{"content":"U1","role":"user"}`},
		{"no user", `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"assistant","content":"A"}]}`, ChatFields, ``},
		{"messages win over an earlier input", `{"model":"m","input":[{"role":"user","content":"I"}],"messages":[{"role":"system","content":"S"}]}`, ChatFields, ``},
		{"responses items", `{"model":"m","input":[{"role":"developer","content":"D"},{"type":"message","role":"user","content":"U"}]}`,
			ResponsesFields, `{"type":"message","role":"user","content":"U"}`},
		{"messages api", `{"model":"m","system":"S","max_tokens":5,"messages":[{"role":"user","content":"U1"},{"role":"assistant","content":"A"}]}`,
			MessagesFields, `{"role":"user","content":"U1"}`},
		{"completion prompt", `{"model":"m","prompt":"P"}`, ChatFields, ``},
	}
	for _, tc := range cases {
		checkSpan(t, "FirstUser", tc.name, tc.body, tc.set, tc.want, func(r *Request) Span { return r.FirstUser })
	}
}

// checkSpan scans body with set and checks the bytes of the span that
// field returns.
func checkSpan(t *testing.T, what, name, body string, set Fields, want string, field func(*Request) Span) {
	t.Helper()
	r, err := ScanWith([]byte(body), set)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if sp := field(&r); body[sp.Start:sp.End] != want {
		t.Errorf("%s: %s = %q, want %q", name, what, body[sp.Start:sp.End], want)
	}
}

// Role is placement only: an escaped, duplicated or non-string role is
// never refused, and the other message fields are read as before.
func TestConversationRoleNotRefused(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[{"r\u006fle":"user","role":"system","role":5,"content":"a"}]}`,
		`{"model":"m","input":[{"role":"user","r\u006fle":"x","content":"a","content":"b"}]}`,
	} {
		for _, set := range []Fields{ChatFields, ResponsesFields, MessagesFields, PoolingFields} {
			if _, err := ScanWith([]byte(body), set); err != nil {
				t.Errorf("ScanWith(%s) = %v", body, err)
			}
		}
	}
	r, err := Scan([]byte(`{"model":"m","messages":[{"role":"system","content":"abc"},{"role":"user","content":"de"}]}`))
	if err != nil || r.Messages != 2 || r.PromptBytes != len(`[{"role":"system","content":"abc"},{"role":"user","content":"de"}]`) || r.FirstContent.Len() != 5 {
		t.Fatalf("%+v %v", r, err)
	}
}

// Prompt is the whole prompt-bearing member: messages (winning over a
// prompt or input before or after them), else the first prompt or input
// that is a string or an array.
func TestPromptSpan(t *testing.T) {
	cases := []struct {
		name, body string
		set        Fields
		want       string
	}{
		{"chat", `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}],"stream":true}`,
			ChatFields, `[{"role":"system","content":"S"},{"role":"user","content":"U"}]`},
		{"messages after a prompt", `{"prompt":"P","model":"m","messages":[ {"role":"user"} ]}`, ChatFields, `[ {"role":"user"} ]`},
		{"a prompt after messages", `{"messages":[],"prompt":"P","model":"m"}`, ChatFields, `[]`},
		{"completion", `{"model":"m","prompt":"P Q"}`, ChatFields, `"P Q"`},
		{"token ids", `{"model":"m","prompt":[1,2]}`, ChatFields, `[1,2]`},
		{"null prompt, then input", `{"model":"m","prompt":null,"input":["a"]}`, ChatFields, `["a"]`},
		{"embedding", `{"model":"m","input":"E"}`, ChatFields, `"E"`},
		{"responses", `{"model":"m","instructions":"I","input":[{"role":"user","content":"U"}]}`, ResponsesFields, `[{"role":"user","content":"U"}]`},
		{"messages api", `{"model":"m","system":"S","messages":[{"role":"user","content":"U"}],"max_tokens":3}`, MessagesFields, `[{"role":"user","content":"U"}]`},
		{"messages null", `{"model":"m","messages":null}`, ChatFields, ``},
		{"rerank has none", `{"model":"m","query":"Q","documents":["a"]}`, PoolingFields, ``},
		{"unread member", `{"model":"m","prompt":"P"}`, MessagesFields, ``},
	}
	for _, tc := range cases {
		checkSpan(t, "Prompt", tc.name, tc.body, tc.set, tc.want, func(r *Request) Span { return r.Prompt })
	}
}
