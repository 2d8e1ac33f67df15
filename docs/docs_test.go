package docs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/config"
)

// yamlBlock returns the first ```yaml block of the Markdown file path.
func yamlBlock(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "\n```yaml\n")
	if start < 0 {
		t.Fatalf("%s: no ```yaml block", path)
	}
	s = s[start+len("\n```yaml\n"):]
	end := strings.Index(s, "\n```")
	if end < 0 {
		t.Fatalf("%s: the ```yaml block does not end", path)
	}
	return s[:end+1]
}

// commentColumn is where the reference's comments begin: a line whose
// first "#" is before it is a field commented out (an alternative, such as
// a model's nomad: instead of backends:), documented all the same.
const commentColumn = 28

var keyLine = regexp.MustCompile(`^( *)(- )?([a-z][a-z0-9_]*):( |$)`)

// documentedFields lists the field paths of a YAML reference (models.queue.max;
// list items add nothing to the path), fields commented out included.
func documentedFields(block string) []string {
	type level struct {
		col  int
		name string
	}
	var stack []level
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 && i < commentColumn && strings.TrimSpace(line[:i]) == "" {
			// "    # nomad:" → "    nomad:": the "#" and one space go.
			line = line[:i] + strings.TrimPrefix(line[i+1:], " ")
		}
		m := keyLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		col := len(m[1]) + len(m[2])
		for len(stack) > 0 && stack[len(stack)-1].col >= col {
			stack = stack[:len(stack)-1]
		}
		path := m[3]
		if len(stack) > 0 {
			path = stack[len(stack)-1].name + "." + m[3]
		}
		stack = append(stack, level{col, path})
		out = append(out, path)
	}
	return out
}

// schemaFields lists the field paths of t's yaml tags, as documentedFields
// writes them; a struct without tagged fields (a scalar decoded its own way)
// is a leaf.
func schemaFields(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := prefix + name
		*out = append(*out, path)
		schemaFields(f.Type, path+".", out)
	}
}

// The configuration reference documents every field of the schema and no
// field the schema lacks, and, taken as a configuration, it loads: a field
// added, renamed or retyped without the manual fails here.
func TestConfigurationReferenceMatchesSchema(t *testing.T) {
	block := yamlBlock(t, "configuration.md")
	documented := documentedFields(block)
	var schema []string
	schemaFields(reflect.TypeFor[config.Config](), "", &schema)
	if len(schema) < 50 {
		t.Fatalf("the schema gave %d fields: the walk is broken", len(schema))
	}
	for _, f := range schema {
		if !slices.Contains(documented, f) {
			t.Errorf("docs/configuration.md does not document %s", f)
		}
	}
	for _, f := range documented {
		if !slices.Contains(schema, f) {
			t.Errorf("docs/configuration.md documents %s, which the schema does not have", f)
		}
	}

	// The environment variables it names, set as an operator would.
	for _, env := range []string{"SLUICE_ADMIN_TOKEN", "VLLM_API_KEY", "NOMAD_TOKEN"} {
		t.Setenv(env, "x")
	}
	// The certificate files it names, there as an operator would have them.
	dir := t.TempDir()
	writeCertificate(t, filepath.Join(dir, "gw.pem"), filepath.Join(dir, "gw.key"))
	block = strings.ReplaceAll(block, "/etc/sluice/tls/", dir+"/")
	if _, err := config.Parse("configuration.md", []byte(block)); err != nil {
		t.Errorf("the reference does not load as a configuration:\n%v", err)
	}
}

// writeCertificate writes a self-signed certificate, valid for a day, and
// its key as PEM files.
func writeCertificate(t *testing.T, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gw.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: []string{"gw.example"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600) != nil ||
		os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600) != nil {
		t.Fatal("write the certificate")
	}
}

// The README's minimal configuration loads as it stands.
func TestREADMEMinimalConfigLoads(t *testing.T) {
	block := yamlBlock(t, "../README.md")
	if _, err := config.Parse("README.md", []byte(block)); err != nil {
		t.Fatalf("the README's minimal configuration does not load:\n%v", err)
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
)

// anchor is GitHub's anchor for a heading: lower case, punctuation but
// "-" and "_" dropped, spaces to "-".
func anchor(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && !strings.ContainsRune("—–’“”·→×≤≥…", r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the anchors of the headings of a Markdown text.
func anchors(md string) []string {
	var out []string
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(md, ""), -1) {
		out = append(out, anchor(m[1]))
	}
	return out
}

// Every relative link of the README and the manual names a file that
// exists and, with a #fragment, a heading of it.
func TestLinks(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, "../README.md", "../third_party/README.md")
	if len(files) < 8 {
		t.Fatalf("found %d Markdown files", len(files))
	}
	links := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := fence.ReplaceAllString(string(b), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, frag, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
			}
			db, err := os.ReadFile(dest)
			if err != nil {
				if st, serr := os.Stat(dest); serr == nil && st.IsDir() && frag == "" {
					continue
				}
				t.Errorf("%s: link %q: %v", f, target, err)
				continue
			}
			if frag != "" && !slices.Contains(anchors(string(db)), frag) {
				t.Errorf("%s: link %q: %s has no heading with the anchor %q", f, target, dest, frag)
			}
		}
	}
	if links < 20 {
		t.Fatalf("checked %d links: the pattern is broken", links)
	}
}

// The anchor rule on headings the manual has.
func TestAnchor(t *testing.T) {
	for h, want := range map[string]string{
		"Shared state (`shm/`)":              "shared-state-shm",
		"A request's life":                   "a-requests-life",
		"Running under Nomad":                "running-under-nomad",
		"W4, chat: conversations stay whole": "w4-chat-conversations-stay-whole",
	} {
		if got := anchor(h); got != want {
			t.Errorf("anchor(%q) = %q, want %q", h, got, want)
		}
	}
}

// bench/results/README.md has a row for every results file, and each row
// names the documents that quote the file: every document under docs/
// (and the README) whose text holds its name, and no other. A new results
// file, or a figure quoted from one, needs its row updated.
func TestResultsIndex(t *testing.T) {
	index, err := os.ReadFile("../bench/results/README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // file -> the documents its row names
	for _, line := range strings.Split(string(index), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 6 || !strings.HasSuffix(strings.Trim(strings.TrimSpace(cols[1]), "`"), ".jsonl") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cols[1]), "`")
		var quoted []string
		for _, m := range regexp.MustCompile(`\]\(\.\./\.\./([^)]+)\)`).FindAllStringSubmatch(cols[4], -1) {
			quoted = append(quoted, m[1])
		}
		rows[name] = quoted
	}
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for _, d := range append(docs, "../README.md") {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Join("docs", d)] = string(b) // docs/x.md, README.md
	}
	files, err := filepath.Glob("../bench/results/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		quoted, ok := rows[name]
		if !ok {
			t.Errorf("bench/results/README.md has no row for %s", name)
			continue
		}
		delete(rows, name)
		var want []string
		for d, text := range texts {
			if strings.Contains(text, strings.TrimSuffix(name, ".jsonl")) {
				want = append(want, d)
			}
		}
		slices.Sort(want)
		slices.Sort(quoted)
		if !slices.Equal(quoted, want) {
			t.Errorf("bench/results/README.md: %s is quoted by %v, its row says %v", name, want, quoted)
		}
	}
	for name := range rows {
		t.Errorf("bench/results/README.md has a row for %s, which is not there", name)
	}
}
