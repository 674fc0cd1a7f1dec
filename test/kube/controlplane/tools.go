//go:build tools

// Package tools keeps the Kubernetes commands this module builds in go.mod.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
