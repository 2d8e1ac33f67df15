package tests

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// The official OpenAI Go SDK, a client nobody here wrote, works through the
// gateway: streamed and not, and it reads the gateway's own errors.
func TestOpenAISDK(t *testing.T) {
	words := []string{"alpha", "beta", "gamma", "delta"}
	g, _ := newGateway(t, fakevllm.Options{Tokens: 4, Words: words}, "")
	client := openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(keyAll), option.WithMaxRetries(0))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "m-alias",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say four words.")},
	}

	res, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatalf("non-streaming: %v", err)
	}
	want := strings.Join(words, " ")
	if len(res.Choices) != 1 || res.Choices[0].Message.Content != want || res.Usage.CompletionTokens != 4 {
		t.Fatalf("non-streaming answer: %+v", res)
	}

	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("streaming: %v", err)
	}
	if chunks < 4 || len(acc.Choices) != 1 || acc.Choices[0].Message.Content != want {
		t.Fatalf("streamed %d chunks, choices %+v", chunks, acc.Choices)
	}

	models, err := client.Models.List(ctx)
	if err != nil || len(models.Data) != 2 || models.Data[0].ID != "m" {
		t.Fatalf("models: %+v %v", models, err)
	}

	bad := openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey("sk-wrong"), option.WithMaxRetries(0))
	_, err = bad.Chat.Completions.New(ctx, params)
	var apiErr *openai.Error
	if !asError(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Fatalf("wrong key: %v", err)
	}
}
