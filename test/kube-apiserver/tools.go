//go:build tools

// Package tools holds kube-apiserver in this module's build list; nothing here is compiled.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
