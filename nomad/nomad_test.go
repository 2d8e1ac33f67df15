package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/tests/fakenomad"
)

// Watch against the fake Nomad: the first list, a change through a
// blocking query, tag filtering, and an outage that keeps the last list.
func TestWatch(t *testing.T) {
	fake, err := fakenomad.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fake.Set("default", "vllm", fakenomad.Instance{Address: "10.0.0.2", Port: 8000, Tags: []string{"llama"}},
		fakenomad.Instance{Address: "10.0.0.1", Port: 8000, Tags: []string{"llama", "canary"}},
		fakenomad.Instance{Address: "10.0.0.3", Port: 8000, Tags: []string{"mistral"}})
	client, err := NewClient(config.NomadClient{Address: fake.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	updates := make(chan []Instance, 10)
	statuses := make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Watch(ctx, client, Source{Service: "vllm", Tags: []string{"llama"}}, func(in []Instance) { updates <- in },
		func(err error) { statuses <- err })
	next := func() []Instance {
		select {
		case in := <-updates:
			return in
		case <-time.After(10 * time.Second):
			t.Fatal("no update")
		}
		return nil
	}
	if got := next(); len(got) != 2 || got[0].Address != "10.0.0.1" || got[1].Address != "10.0.0.2" {
		t.Fatalf("first list: %v", got)
	}
	fake.Set("default", "vllm", fakenomad.Instance{Address: "10.0.0.2", Port: 8000, Tags: []string{"llama"}})
	if got := next(); len(got) != 1 || got[0].Address != "10.0.0.2" {
		t.Fatalf("after a change: %v", got)
	}
	fake.SetDown(true)
	for err := range statuses {
		if err != nil {
			break // the outage was reported
		}
	}
	select {
	case in := <-updates:
		t.Fatalf("an outage changed the list: %v", in)
	default:
	}
	fake.SetDown(false)
	fake.Set("default", "vllm")
	if got := next(); len(got) != 0 {
		t.Fatalf("after the outage and an empty list: %v", got)
	}
}

func TestBackends(t *testing.T) {
	got, skipped := Backends(&config.NomadService{Scheme: "https", Slots: 8}, []Instance{{"10.0.0.1", 8000}, {"fd00::1", 9000}, {"vllm-0.dc1.internal", 8000}})
	if len(got) != 3 || got[0].URL != "https://10.0.0.1:8000" || got[1].URL != "https://[fd00::1]:9000" ||
		got[2].URL != "https://vllm-0.dc1.internal:8000" || got[0].Slots != 8 || len(skipped) != 0 {
		t.Fatalf("%+v %v", got, skipped)
	}
}

// Addresses that make no URL to dial are skipped, each with its reason,
// and the good ones kept: never a backend the workers cannot build a pool
// for (a worker panicked on fe80::1%eth0).
func TestBackendsSkipsBadAddresses(t *testing.T) {
	bad := []Instance{{"fe80::1%eth0", 8000}, {"10.0.0.1 ", 8000}, {"10.0.0.1 10.0.0.2", 8000}, {"a/b", 8000},
		{"host?x", 8000}, {"user@host", 8000}, {"h:1", 8000}, {"[::1]", 8000}, {"", 8000}, {"..", 8000},
		{"10.0.0.1", 70000}, {"\x00", 8000}, {"é.example", 8000}, {"%", 8000}}
	got, skipped := Backends(&config.NomadService{Scheme: "http", Slots: 1}, append(bad, Instance{"10.0.0.9", 8000}))
	if len(got) != 1 || got[0].URL != "http://10.0.0.9:8000" {
		t.Fatalf("kept %+v", got)
	}
	if len(skipped) != len(bad) {
		t.Fatalf("skipped %d of %d: %v", len(skipped), len(bad), skipped)
	}
	for _, s := range skipped {
		if s.Err == nil {
			t.Errorf("%v skipped without a reason", s.Instance)
		}
	}
}
