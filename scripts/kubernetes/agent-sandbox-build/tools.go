//go:build tools

// The agent-sandbox controller built by scripts/kubernetes/agent-sandbox.sh; importing its main
// package keeps `go mod tidy` from dropping what it needs.
package tools

import (
	_ "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller"
)
