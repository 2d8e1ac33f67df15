// The official OpenAI Node client against sluice over https://, trusting
// the test's CA through NODE_EXTRA_CA_CERTS (how an operator gives Node a
// private CA). Run by tests/tls_test.go (TestTLSNodeOpenAIClient):
//   SLUICE_URL=https://127.0.0.1:PORT/v1 SLUICE_KEY=... NODE_EXTRA_CA_CERTS=ca.pem node https-client.mjs
// Prints one JSON line: what it got, for the Go test to check.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.SLUICE_URL, apiKey: process.env.SLUICE_KEY, maxRetries: 0, timeout: 60_000 });

const whole = await client.chat.completions.create({
  model: "m",
  messages: [{ role: "user", content: "hi over tls" }],
});
let streamed = "";
let chunks = 0;
const stream = await client.chat.completions.create({
  model: "m",
  messages: [{ role: "user", content: "stream over tls" }],
  stream: true,
});
for await (const chunk of stream) {
  chunks++;
  streamed += chunk.choices[0]?.delta?.content ?? "";
}
let refused = null;
try {
  await new OpenAI({ baseURL: process.env.SLUICE_URL, apiKey: "wrong", maxRetries: 0 }).models.list();
} catch (e) {
  refused = { status: e.status, code: e.code ?? e.error?.code ?? null };
}
console.log(JSON.stringify({ whole: whole.choices[0].message.content, streamed, chunks, refused }));
