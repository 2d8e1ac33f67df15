// Package reqscan reads what the gateway needs from a request body in
// one pass over its bytes, validating the JSON as it goes, without
// building a document: the routing fields, the streaming flags, the
// affinity key's raw bytes, the message count and the prompt size. It also
// inserts stream_options.include_usage into the bytes.
//
// Which members are read depends on the API the body is for (Fields): each
// of vLLM's request models has its own. A member is read exactly as vLLM
// reads it (Python's json, then pydantic's lax mode) or the body is refused
// (FieldError); a member the API does not read is only validated.
//
// Purpose-built rather than gjson because one pass does both the
// validation and the extraction, and long strings (prompts) are skipped
// with bytes.IndexByte's vectorised search: see BenchmarkScan100KB, which
// runs it side by side with gjson (Valid + GetMany) on the same body.
package reqscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Span is a half-open byte range [Start, End) of the body.
type Span struct{ Start, End int }

// Len is the span's length in bytes.
func (s Span) Len() int { return s.End - s.Start }

// Request is what one scan found. Spans point into the scanned body; a
// zero Span means the field is absent (or was not read: see Read). One
// flat record of the fields the gateway reads (more than the ~10 fields a
// type of sluice's has otherwise): grouped, each phase would reach into
// the groups for the same fields.
type Request struct {
	Read         Fields // what the scan read beyond model: the set ScanWith was given
	Model        Span   // raw value of "model" (a JSON string, quotes included)
	ModelName    string
	Stream       bool
	StreamOpts   Span // raw value of "stream_options"
	IncludeUsage bool // stream_options.include_usage is true
	UsageValue   Span // raw value of stream_options.include_usage
	User         Span // raw value of "user" (a JSON string, quotes included)
	FirstContent Span // raw value of the first prompt-bearing member: messages[0].content, "prompt", "input", "query"…

	// Conversation is the raw bytes that name the conversation (the
	// affinity key's, with Instructions or System before them): of
	// "messages", or of an "input" or "prompt" array of objects, from the
	// start of element 0 to the end of the first element with a plain
	// "role": "user" member (element 0 alone if none has); of a string, or
	// an array whose first element is not an object, its first
	// ConversationCap bytes (of element 0 when that is a string or an
	// array); else FirstContent's first ConversationCap bytes. Placement
	// only: a role written with escapes, duplicated or not a string is not
	// refused, it only ends the conversation elsewhere.
	Conversation Span
	// FirstUser is the first user turn, the element that ends
	// Conversation (of a "messages", "input" or "prompt" array: the first
	// with a plain "role": "user"); zero when Conversation ends otherwise.
	// What comes before it in the prompt (system and developer messages)
	// is what conversations of one app share; placement only, as
	// Conversation.
	FirstUser Span
	// Prompt is the raw value of the member that holds the prompt as the
	// model sees it, whole: "messages" (an array), else the first "prompt"
	// or "input" (a string or an array); else zero. With Instructions or
	// System before it, it is what the prefix index cuts into blocks
	// (placement only: a conversation's later turns resend its bytes).
	Prompt   Span
	Messages int // number of messages
	// PromptBytes is the bytes of every member that becomes prompt tokens:
	// the messages (whole: tool calls and their arguments are prompt too),
	// prompt, input, instructions, system, tools, documents… summed.
	PromptBytes int
	MaxTokens   int64
	// N is how many answers each prompt asks for: the larger of "n" and
	// "best_of" (0 when neither is set: one).
	N int64
	// Prompts is how many prompts a completion's "prompt" batches: the
	// length of an array of strings or of token-id arrays, else 0 (one).
	Prompts int
	// CacheSalt is the raw value of "cache_salt" (a JSON string, quotes
	// included; zero when absent or null): vLLM salts the prefix cache's
	// block hashes with it. The gateway sends its own (the key's cache
	// group's), mixed with the client's.
	CacheSalt Span
	// Priority is the raw value of "priority" (any JSON value), vLLM's
	// scheduling priority: the key's tier sets it, not the client (the
	// gateway sends 0).
	Priority Span
	// cacheSaltAt is cache_salt's value whatever it is (null too): where
	// the gateway's goes.
	cacheSaltAt Span
	ObjectEnd   int // offset of the top-level object's closing '}'

	// Responses API (ResponsesFields).

	// PreviousResponse is the raw value of "previous_response_id" (a JSON
	// string, quotes included) and PreviousResponseID its decoded value:
	// vLLM keeps stored responses in the memory of the instance that made
	// them, so this routes the request.
	PreviousResponse   Span
	PreviousResponseID string
	Instructions       Span // raw value of "instructions" (a JSON string): the head of the prompt
	RequestID          Span // raw value of "request_id": vLLM makes it the response's id, so the client chooses it
	Store              bool // the client asks vLLM to store the response ("store", which defaults to true)
	Background         bool // "background": the answer is a queued response, without the generation's usage

	// Messages API (MessagesFields).

	System Span // raw value of "system" (a string or an array of blocks): the head of the prompt
}

// ConversationCap is how many bytes of a string prompt (a completion's
// "prompt", a Responses string "input") name its conversation: its head.
const ConversationCap = 4096

// MaxDepth is how deeply arrays and objects may nest. encoding/json stops
// at 10,000; Python's json module, which vLLM reads bodies with, fails
// near its recursion limit of 1,000 (less the interpreter's own frames),
// so a deeper body could not be served anyway. Recursing that deep here
// costs a few tens of KiB of stack at most.
const MaxDepth = 512

// SyntaxError is malformed JSON at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte offset %d", e.Msg, e.Offset) }

// FieldError is valid JSON that the gateway will not act on, because one
// of the fields it reads could be read differently by the backend: a
// duplicated or escaped key (Python's json decodes escapes in keys and
// keeps the last of duplicates), or a value of a type the backend would
// coerce (pydantic's lax mode reads "stream": 1 or "yes" as true).
// Refusing these is what keeps authorisation, routing, limits and billing
// on the value the backend serves.
type FieldError struct {
	Field  string // the field's name, as the backend reads it: "model", "stream_options.include_usage", "messages[].content"
	Offset int    // byte offset of the key or value in question
	Msg    string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s at byte offset %d", e.Msg, e.Offset) }

type scanner struct {
	b     []byte
	i     int
	depth int
	err   *SyntaxError // the first syntax error: scanning stops there
	ferr  *FieldError  // the first field error: scanning goes on, a syntax error wins
	user  bool         // the message or item being scanned has "role": "user"
	batch int          // the prompts in the "prompt" array just scanned (messages): Request.Prompts
	r     Request      // by value: a *Request here made every scan allocate the Request (escape analysis sees the scanner flow to the returned error)
}

// What an object being scanned is: its members are handled accordingly.
// (A kind, not callbacks: closures would escape and allocate per scan.)
type objectKind int

const (
	plainObject   objectKind = iota // only validated
	requestObject                   // the top-level request
	messageObject                   // an element of "messages"
	itemObject                      // an object element of an "input" or "prompt" array: only its role is read
	streamOptions                   // the "stream_options" object
)

func (s *scanner) fail(msg string) {
	if s.err == nil {
		s.err = &SyntaxError{Offset: s.i, Msg: msg}
	}
}

// failField records a field error. The scan goes on: malformed JSON later
// in the body is the error to report (the body is not JSON at all).
func (s *scanner) failField(f field, offset int, msg string) {
	if s.ferr == nil {
		s.ferr = &FieldError{Field: fieldNames[f], Offset: offset, Msg: msg}
	}
}

// enter and leave count the nesting of containers; enter fails past MaxDepth.
func (s *scanner) enter() bool {
	s.depth++
	if s.depth > MaxDepth {
		s.fail(fmt.Sprintf("arrays and objects nested deeper than %d levels", MaxDepth))
		return false
	}
	return true
}

func (s *scanner) leave() { s.depth-- }

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Fields selects what a scan reads beyond model: one set per API, since
// each of vLLM's request models has its own members. A member outside the
// set is only validated, never refused for being duplicated or escaped:
// vLLM ignores it (or keeps it unread), so the gateway must not act on it
// either. Each set is exactly the members of that API's pydantic model that
// the gateway acts on.
type Fields uint32

// The members a scan can read, a bit each (model is always read). The
// bit's position is the member's field number less one (see bitOf).
const (
	FieldStream                Fields = 1 << iota // "stream": a bool
	FieldStreamOptions                            // "stream_options" and its include_usage
	FieldMaxTokens                                // "max_tokens": a count
	FieldMaxCompletionTokens                      // "max_completion_tokens": a count
	FieldUser                                     // "user": a string
	FieldMessages                                 // "messages": counted, each content in the prompt
	FieldPrompt                                   // "prompt": in the prompt
	FieldInput                                    // "input": in the prompt
	FieldPreviousResponseID                       // "previous_response_id": a string, routes the request
	FieldInstructions                             // "instructions": a string, in the prompt
	FieldMaxOutputTokens                          // "max_output_tokens": a count
	FieldStore                                    // "store": a bool
	FieldBackground                               // "background": a bool
	FieldRequestID                                // "request_id": a string, the response's id
	FieldPreviousInputMessages                    // "previous_input_messages": in the prompt
	FieldPreviousResponse                         // "previous_response": in the prompt
	FieldSystem                                   // "system": a string or blocks, in the prompt
	FieldQuery                                    // "query" (rerank): in the prompt
	FieldDocuments                                // "documents" (rerank, score): in the prompt
	FieldQueries                                  // "queries" (score): in the prompt
	FieldItems                                    // "items" (score): in the prompt
	FieldData1                                    // "data_1" (score): in the prompt
	FieldData2                                    // "data_2" (score): in the prompt
	FieldText1                                    // "text_1" (score): in the prompt
	FieldText2                                    // "text_2" (score): in the prompt
	FieldTokens                                   // "tokens" (detokenize): in the prompt
	FieldData                                     // "data" (pooling with an IO processor plugin): in the prompt
	FieldTools                                    // "tools": in the prompt (the chat template renders them)
	FieldN                                        // "n": answers per prompt, a count
	FieldBestOf                                   // "best_of": answers generated per prompt, a count
	FieldCacheSalt                                // "cache_salt": a string, replaced by the key's cache group's
	FieldPriority                                 // "priority": replaced by 0 (vLLM's scheduling priority is not the client's)
)

// The sets of the APIs the gateway serves. Each comment names the vLLM
// models (vllm/entrypoints/...) whose members they are.
var (
	// ChatFields is for chat completions, completions and embeddings
	// (ChatCompletionRequest, CompletionRequest, EmbeddingRequest): what
	// Scan reads.
	// Also tools and documents (the chat template renders both into the
	// prompt) and n and best_of (each answer generates up to max_tokens).
	ChatFields = FieldStream | FieldStreamOptions | FieldMaxTokens | FieldMaxCompletionTokens |
		FieldUser | FieldMessages | FieldPrompt | FieldInput | FieldTools | FieldDocuments | FieldN | FieldBestOf |
		FieldCacheSalt | FieldPriority

	// ResponsesFields is for /v1/responses (openai/responses/protocol.py
	// ResponsesRequest). It has no stream_options: vLLM reports usage in
	// the response.completed event, so nothing is injected. No max_tokens
	// either: its limit is max_output_tokens.
	ResponsesFields = FieldStream | FieldUser | FieldInput | FieldPreviousResponseID | FieldInstructions |
		FieldMaxOutputTokens | FieldStore | FieldBackground | FieldRequestID |
		FieldPreviousInputMessages | FieldPreviousResponse | FieldTools | FieldCacheSalt | FieldPriority

	// MessagesFields is for /v1/messages and /v1/messages/count_tokens
	// (anthropic/protocol.py AnthropicMessagesRequest and
	// AnthropicCountTokensRequest). There is no user (metadata.user_id is
	// not read by vLLM) and no stream_options: vLLM asks itself for usage
	// on the chat request it converts to. count_tokens has no stream and no
	// max_tokens (vLLM ignores them there): scan it with
	// MessagesFields &^ (FieldStream | FieldMaxTokens).
	MessagesFields = FieldStream | FieldMaxTokens | FieldMessages | FieldSystem | FieldTools

	// PoolingFields is for /rerank, /score, /tokenize, /detokenize,
	// /pooling and /classify (pooling/scoring/protocol.py RerankRequest and
	// the ScoreRequest union, serve/tokenize/protocol.py, pooling/pooling
	// and pooling/classify protocol.py): model, user (their
	// PoolingBasicRequestMixin) and every prompt-bearing member, summed,
	// and priority (replaced, as for chat).
	// None of them streams: a "stream" key is only validated.
	PoolingFields = FieldUser | FieldMessages | FieldPrompt | FieldInput | FieldQuery | FieldDocuments |
		FieldQueries | FieldItems | FieldData1 | FieldData2 | FieldText1 | FieldText2 | FieldTokens | FieldData |
		FieldPriority
)

// field is one of the members the gateway can read. Every other member is
// only validated. The top-level ones come first, in the order of their
// Fields bits.
type field uint8

const (
	noField field = iota
	fStream
	fStreamOptions
	fMaxTokens
	fMaxCompletionTokens
	fUser
	fMessages
	fPrompt
	fInput
	fPreviousResponseID
	fInstructions
	fMaxOutputTokens
	fStore
	fBackground
	fRequestID
	fPreviousInputMessages
	fPreviousResponse
	fSystem
	fQuery
	fDocuments
	fQueries
	fItems
	fData1
	fData2
	fText1
	fText2
	fTokens
	fData
	fTools
	fN
	fBestOf
	fCacheSalt
	fPriority
	fModel        // always read
	fIncludeUsage // in stream_options
	fContent      // in each element of messages
	fRole         // in each element of messages, input and prompt: placement only, never refused
	numFields
)

// bitOf is the Fields bit of a top-level field other than model.
func bitOf(f field) Fields { return 1 << (f - 1) }

// fieldNames are the fields' names in errors (the key itself for the
// top level's).
var fieldNames = [numFields]string{
	fModel: "model", fStream: "stream", fStreamOptions: "stream_options",
	fMaxTokens: "max_tokens", fMaxCompletionTokens: "max_completion_tokens",
	fUser: "user", fMessages: "messages", fPrompt: "prompt", fInput: "input",
	fPreviousResponseID: "previous_response_id", fInstructions: "instructions",
	fMaxOutputTokens: "max_output_tokens", fStore: "store", fBackground: "background",
	fRequestID: "request_id", fPreviousInputMessages: "previous_input_messages",
	fPreviousResponse: "previous_response", fSystem: "system", fQuery: "query",
	fDocuments: "documents", fQueries: "queries", fItems: "items", fData1: "data_1",
	fData2: "data_2", fText1: "text_1", fText2: "text_2", fTokens: "tokens", fData: "data",
	fTools: "tools", fN: "n", fBestOf: "best_of", fCacheSalt: "cache_salt", fPriority: "priority",
	fIncludeUsage: "stream_options.include_usage", fContent: "messages[].content",
	fRole: "messages[].role",
}

// topField returns the top-level field a (decoded) key names, whatever
// the set. The cases are grouped by length so that a key is compared with
// few names.
//
// Long (about 105 lines) on purpose: one switch on the key's length and
// bytes, run for every top-level key of every body, with no hashing and
// nothing to build; split up, each key would pay calls for nothing.
func topField(key []byte) field {
	switch len(key) {
	case 1:
		if key[0] == 'n' {
			return fN
		}
	case 4:
		switch string(key) {
		case "user":
			return fUser
		case "data":
			return fData
		}
	case 5:
		switch string(key) {
		case "model":
			return fModel
		case "input":
			return fInput
		case "query":
			return fQuery
		case "store":
			return fStore
		case "items":
			return fItems
		case "tools":
			return fTools
		}
	case 6:
		switch string(key) {
		case "stream":
			return fStream
		case "prompt":
			return fPrompt
		case "system":
			return fSystem
		case "tokens":
			return fTokens
		case "data_1":
			return fData1
		case "data_2":
			return fData2
		case "text_1":
			return fText1
		case "text_2":
			return fText2
		}
	case 7:
		switch string(key) {
		case "queries":
			return fQueries
		case "best_of":
			return fBestOf
		}
	case 8:
		switch string(key) {
		case "messages":
			return fMessages
		case "priority":
			return fPriority
		}
	case 9:
		if string(key) == "documents" {
			return fDocuments
		}
	case 10:
		switch string(key) {
		case "max_tokens":
			return fMaxTokens
		case "background":
			return fBackground
		case "request_id":
			return fRequestID
		case "cache_salt":
			return fCacheSalt
		}
	case 12:
		if string(key) == "instructions" {
			return fInstructions
		}
	case 14:
		if string(key) == "stream_options" {
			return fStreamOptions
		}
	case 17:
		switch string(key) {
		case "max_output_tokens":
			return fMaxOutputTokens
		case "previous_response":
			return fPreviousResponse
		}
	case 20:
		if string(key) == "previous_response_id" {
			return fPreviousResponseID
		}
	case 21:
		if string(key) == "max_completion_tokens" {
			return fMaxCompletionTokens
		}
	case 23:
		if string(key) == "previous_input_messages" {
			return fPreviousInputMessages
		}
	}
	return noField
}

// fieldOf returns the field a (decoded) key names in an object of kind,
// if the scan reads it (set).
func fieldOf(kind objectKind, key []byte, set Fields) field {
	if kind != requestObject {
		return nestedField(kind, key)
	}
	f := topField(key)
	if f < fModel && set&bitOf(f) == 0 { // (noField too: bitOf(noField) is 0)
		return noField
	}
	return f
}

// nestedField returns the field a key names in stream_options, a message
// or an item.
func nestedField(kind objectKind, key []byte) field {
	switch {
	case kind == streamOptions && string(key) == "include_usage":
		return fIncludeUsage
	case kind == messageObject && string(key) == "content":
		return fContent
	case (kind == messageObject || kind == itemObject) && string(key) == "role":
		return fRole
	}
	return noField
}

// Scan reads body, which must be one JSON object, as a chat completion,
// completion or embedding request: ScanWith(body, ChatFields).
func Scan(body []byte) (Request, error) { return ScanWith(body, ChatFields) }

// ScanWith reads body, which must be one JSON object, as the request of
// the API whose members f selects. The error is a *SyntaxError for
// malformed JSON, a *FieldError for JSON whose reading by the backend could
// differ from the gateway's.
func ScanWith(body []byte, f Fields) (Request, error) {
	s := scanner{b: body, r: Request{Read: f, Store: f&FieldStore != 0}} // ResponsesRequest: store defaults to true
	s.ws()
	if s.i >= len(body) || body[s.i] != '{' {
		s.fail("request body must be a JSON object")
		return Request{}, s.err
	}
	s.object(requestObject)
	r := &s.r
	r.ObjectEnd = s.i - 1
	s.ws()
	if s.err == nil && s.i != len(body) {
		s.fail("unexpected data after the JSON object")
	}
	if s.err != nil {
		return Request{}, s.err
	}
	if s.ferr != nil {
		return Request{}, s.ferr
	}
	if r.Conversation.Len() == 0 && r.FirstContent.Len() > 0 {
		r.Conversation = capped(r.FirstContent)
	}
	if r.Model.Len() > 0 {
		name, ok := DecodeString(string(body[r.Model.Start+1 : r.Model.End-1]))
		if !ok {
			return Request{}, &FieldError{Field: "model", Offset: r.Model.Start,
				Msg: "model is not valid UTF-8 (or holds an unpaired surrogate escape)"}
		}
		r.ModelName = name
	}
	if r.PreviousResponse.Len() > 0 {
		id, ok := DecodeString(string(body[r.PreviousResponse.Start+1 : r.PreviousResponse.End-1]))
		if !ok {
			return Request{}, &FieldError{Field: "previous_response_id", Offset: r.PreviousResponse.Start,
				Msg: "previous_response_id is not valid UTF-8 (or holds an unpaired surrogate escape)"}
		}
		r.PreviousResponseID = id
	}
	return s.r, nil
}

// object scans an object at s.i ('{') of the given kind. In the objects
// whose members the gateway reads, a key that names one of those members
// must be written plainly and only once (see FieldError).
func (s *scanner) object(kind objectKind) {
	if !s.enter() {
		return
	}
	defer s.leave()
	if s.open('}') {
		return
	}
	var seen uint64 // the fields met so far in this object, a bit each
	for s.err == nil {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			s.fail("expected a string key")
			return
		}
		ks := s.i
		s.str()
		if s.err != nil {
			return
		}
		f := noField
		if kind != plainObject {
			if f = s.keyField(kind, ks); f != noField {
				if seen&(1<<f) != 0 && f != fRole {
					s.failField(f, ks, "duplicate key `"+fieldNames[f]+"`: send it once (the backend would read the last one)")
				}
				seen |= 1 << f
			}
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			s.fail("expected ':' after an object key")
			return
		}
		s.i++
		s.ws()
		start := s.i
		s.batch = 0
		switch {
		case f == fMessages && s.i < len(s.b) && s.b[s.i] == '[':
			s.messages(messageObject)
		case (f == fInput || f == fPrompt) && s.i < len(s.b) && s.b[s.i] == '[':
			s.messages(itemObject)
		case f == fStreamOptions && s.i < len(s.b) && s.b[s.i] == '{':
			s.object(streamOptions)
		default:
			s.value()
		}
		if s.err != nil {
			return
		}
		s.member(f, Span{start, s.i})
		if !s.endOfElement('}') {
			return
		}
	}
}

// keyField returns the field named by the key whose opening quote is at
// ks (the key ends at s.i). A key with escapes that decodes to a field's
// name is refused: Python reads "mod\u0065l" as "model".
func (s *scanner) keyField(kind objectKind, ks int) field {
	raw := s.b[ks+1 : s.i-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		if kind == requestObject { // fieldOf, written out: a call less per key
			f := topField(raw)
			if f < fModel && s.r.Read&bitOf(f) == 0 {
				return noField
			}
			return f
		}
		return nestedField(kind, raw)
	}
	name, _ := DecodeString(string(raw)) // rare: keys seldom have escapes
	if f := fieldOf(kind, []byte(name), s.r.Read); f != noField && f != fRole {
		s.failField(f, ks, "the key `"+fieldNames[f]+"` is written with escape sequences: write it plainly")
	}
	return noField
}

// member records what the request needs of one scanned member, refusing
// a value whose type the backend would coerce rather than reject.
//
// Long (about 90 lines): one case per field the gateway reads, each with
// the type rule vLLM's pydantic applies to it; read as one table.
func (s *scanner) member(f field, v Span) {
	r := &s.r
	switch f {
	case fModel:
		r.Model = s.optString(f, v)
	case fStream:
		r.Stream = s.boolean(f, v)
	case fStreamOptions:
		if c := s.b[v.Start]; c == '{' || c == 'n' {
			r.StreamOpts = v
		} else {
			s.failField(f, v.Start, "stream_options must be an object")
		}
	case fRole:
		if string(s.b[v.Start:v.End]) == `"user"` {
			s.user = true
		}
	case fIncludeUsage:
		r.UsageValue = v
		r.IncludeUsage = s.boolean(f, v)
	case fUser:
		r.User = s.optString(f, v)
	case fMaxTokens, fMaxCompletionTokens, fMaxOutputTokens:
		if n := s.count(f, v); n > r.MaxTokens {
			r.MaxTokens = n
		}
	case fCacheSalt:
		r.CacheSalt, r.cacheSaltAt = s.optString(f, v), v // vLLM: str | None, not empty
		if r.CacheSalt.Len() == 2 {
			s.failField(f, v.Start, "cache_salt must be a non-empty string")
		}
	case fPriority:
		r.Priority = v // replaced whatever it is: vLLM never sees the client's
	case fTools:
		r.PromptBytes += v.Len() // not the conversation's start: placement reads what follows
	case fN, fBestOf:
		r.N = max(r.N, s.count(f, v))
	case fMessages:
		if s.b[v.Start] == '[' { // messages win over a prompt or input before them
			r.Prompt = v
			// Whole, not their contents alone: an assistant's tool calls
			// and their arguments are prompt tokens too (issue 30, item 4).
			r.PromptBytes += v.Len()
		}
	case fContent:
		if r.Messages == 0 && r.FirstContent.Len() == 0 {
			r.FirstContent = v
		}
	case fPreviousResponseID:
		r.PreviousResponse = s.optString(f, v)
	case fInstructions:
		r.Instructions = s.optString(f, v)
		r.PromptBytes += v.Len()
	case fStore:
		r.Store = s.boolean(f, v) // null is None: not stored
	case fBackground:
		r.Background = s.boolean(f, v)
	case fRequestID:
		if s.b[v.Start] == '"' { // request_id: str, not Optional
			r.RequestID = v
		} else {
			s.failField(f, v.Start, "request_id must be a string")
		}
	case fSystem:
		switch s.b[v.Start] {
		case '"', '[':
			r.System = v
		case 'n':
		default:
			s.failField(f, v.Start, "system must be a string or an array of content blocks")
		}
		r.PromptBytes += v.Len()
	case fPrompt, fInput, fPreviousInputMessages, fPreviousResponse, fQuery, fDocuments,
		fQueries, fItems, fData1, fData2, fText1, fText2, fTokens, fData:
		// Summed, not replaced: a chat request whose messages are
		// followed by an (ignored) "prompt": "" must not reserve for an
		// empty prompt.
		if r.FirstContent.Len() == 0 {
			r.FirstContent = v
		}
		if (f == fPrompt || f == fInput) && s.b[v.Start] == '"' && r.Conversation.Len() == 0 {
			r.Conversation = capped(v)
		}
		if c := s.b[v.Start]; (f == fPrompt || f == fInput) && (c == '"' || c == '[') && r.Prompt.Len() == 0 {
			r.Prompt = v
		}
		if f == fPrompt {
			r.Prompts = s.batch // this value's, if it was an array (messages)
		}
		r.PromptBytes += v.Len()
	}
}

// capped is v's first ConversationCap bytes.
func capped(v Span) Span {
	v.End = min(v.End, v.Start+ConversationCap)
	return v
}

// optString returns v if it is a JSON string, a zero Span for null (as
// if absent), and refuses anything else (pydantic's str takes no number).
func (s *scanner) optString(f field, v Span) Span {
	switch s.b[v.Start] {
	case '"':
		return v
	case 'n':
	default:
		s.failField(f, v.Start, fieldNames[f]+" must be a string")
	}
	return Span{}
}

// boolean reads a JSON true, false or null (false). Anything else is
// refused: pydantic would read 1, "true" or "yes" as true.
func (s *scanner) boolean(f field, v Span) bool {
	switch string(s.b[v.Start:v.End]) {
	case "true":
		return true
	case "false", "null":
		return false
	}
	s.failField(f, v.Start, fieldNames[f]+" must be true or false")
	return false
}

// count reads a token count: a JSON integer >= 0, or null (0). A value
// past the int64 range saturates at its maximum (it then fits no token
// limit); a fraction, an exponent, a string (pydantic would coerce "5" or
// 5.0) or a negative number is refused.
func (s *scanner) count(f field, v Span) int64 {
	raw := s.b[v.Start:v.End]
	if string(raw) == "null" || string(raw) == "-0" {
		return 0
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			s.failField(f, v.Start, fieldNames[f]+" must be a non-negative integer")
			return 0
		}
		if d := int64(c - '0'); n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64 // saturated: stays there
		} else {
			n = n*10 + d
		}
	}
	return n
}

// messages scans the "messages" array (kind messageObject: counts its
// elements, sums their content sizes, keeps the first content's span) or
// an "input" or "prompt" array (kind itemObject), and sets Conversation
// from it, unless an earlier member did and this is not "messages".
func (s *scanner) messages(kind objectKind) {
	if !s.enter() {
		return
	}
	defer s.leave()
	start := s.i
	if s.open(']') {
		return
	}
	conv := kind == messageObject || s.r.Conversation.Len() == 0 // still looking for the conversation's end
	whole := false                                               // the conversation is the whole array, capped
	batch := false                                               // an array of prompts (strings or token-id arrays)
	for n := 0; s.err == nil; n++ {
		s.ws()
		es := s.i
		obj := s.i < len(s.b) && s.b[s.i] == '{'
		if obj {
			s.user = false
			if conv || kind == messageObject {
				s.object(kind)
			} else {
				s.object(plainObject) // an item past the conversation: only validated
			}
		} else {
			s.value()
		}
		if s.err != nil {
			return
		}
		if n == 0 && kind == itemObject {
			c := s.b[es]
			batch = c == '"' || c == '[' // a batch of prompts: its length once the array ends
		}
		if conv {
			switch {
			case n == 0 && !obj && kind == itemObject: // a prompt's strings or token ids
				if c := s.b[es]; c == '"' || c == '[' {
					s.r.Conversation = capped(Span{es, s.i})
				} else {
					whole = true
				}
				conv = false
			case n == 0 || obj && s.user:
				s.r.Conversation = Span{s.r.Conversation.Start, s.i}
				if n == 0 {
					s.r.Conversation.Start = es
					s.r.FirstUser = Span{}
				}
				if obj && s.user {
					s.r.FirstUser = Span{es, s.i}
				}
				conv = !(obj && s.user)
			}
		}
		if kind == messageObject {
			s.r.Messages++
		}
		if !s.endOfElement(']') {
			if batch {
				s.batch = n + 1
			}
			break
		}
	}
	if whole {
		s.r.Conversation = capped(Span{start, s.i})
	}
}

// open consumes an object's or array's opening bracket and the whitespace
// after it, and reports whether the container is empty (closer consumed).
func (s *scanner) open(closer byte) (empty bool) {
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		return true
	}
	return false
}

// endOfElement consumes ',' (true: another element follows) or the closing
// bracket (false).
func (s *scanner) endOfElement(closer byte) bool {
	s.ws()
	if s.i >= len(s.b) {
		s.fail("unexpected end of JSON input")
		return false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true
	case closer:
		s.i++
		return false
	}
	s.fail("expected ',' or '" + string(closer) + "'")
	return false
}

// value scans any JSON value at s.i.
func (s *scanner) value() {
	if s.i >= len(s.b) {
		s.fail("unexpected end of JSON input")
		return
	}
	switch c := s.b[s.i]; {
	case c == '"':
		s.str()
	case c == '{':
		s.object(plainObject)
	case c == '[':
		if !s.enter() {
			return
		}
		defer s.leave()
		if s.open(']') {
			return
		}
		for s.err == nil {
			s.ws()
			s.value()
			if s.err != nil || !s.endOfElement(']') {
				return
			}
		}
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	default:
		s.fail("invalid character " + strconv.QuoteRune(rune(c)) + " looking for a value")
	}
}

func (s *scanner) literal(lit string) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.fail("invalid literal, expected " + lit)
		return
	}
	s.i += len(lit)
}

func (s *scanner) number() {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		st := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > st
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.i = i
		s.fail("invalid number")
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.i = i
			s.fail("invalid number")
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.i = i
			s.fail("invalid number")
			return
		}
	}
	s.i = i
}

// str scans a string at s.i (the opening quote). Quotes and backslashes
// are found with bytes.IndexByte's vectorised search and raw control
// characters with an 8-bytes-at-a-time check, so a 100 KB prompt costs
// about a memory scan. The next quote's position is kept across escapes,
// so a string with many escapes is still scanned once.
func (s *scanner) str() {
	b := s.b
	i := s.i + 1
	q := -1 // position of the next '"' at or after i
	for {
		if q < i {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				s.i = len(b)
				s.fail("unterminated string")
				return
			}
			q = i + j
		}
		bs := bytes.IndexByte(b[i:q], '\\')
		end := q
		if bs >= 0 {
			end = i + bs
		}
		if k := indexControl(b[i:end]); k >= 0 {
			s.i = i + k
			s.fail("invalid control character in string")
			return
		}
		if bs < 0 {
			s.i = q + 1
			return
		}
		i = end
		switch b[i+1] { // i+1 <= q: a backslash before the quote
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
				s.i = i
				s.fail("invalid \\u escape")
				return
			}
			i += 6
		default:
			s.i = i
			s.fail("invalid escape character")
			return
		}
	}
}

// indexControl finds a byte < 0x20, which JSON forbids raw inside strings,
// testing 8 bytes at a time (the has-less-than bit trick) before looking
// at single bytes.
func indexControl(b []byte) int {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-lo)&^x&hi != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return -1
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
