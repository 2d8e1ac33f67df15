package tests

import (
	"testing"

	"github.com/hashicorp/hcl/v2/hclparse"
)

// The Nomad job parses as HCL (no Nomad agent here to plan it).
func TestNomadJobParses(t *testing.T) {
	_, diags := hclparse.NewParser().ParseHCLFile("../deploy/nomad/sluice.nomad.hcl")
	if diags.HasErrors() {
		t.Fatalf("deploy/nomad/sluice.nomad.hcl: %s", diags.Error())
	}
}
