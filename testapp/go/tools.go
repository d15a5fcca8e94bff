//go:build tools

// Package tools pins the load generator bombardier (and iris, the Go web
// framework of the Go-vs-.NET companion study) as module dependencies, so
// `go build github.com/codesenberg/bombardier` builds exactly v1.2.6 and the
// module graph is the one shared/offline's Go proxy mirrors.
package tools

import (
	_ "github.com/codesenberg/bombardier"
	_ "github.com/kataras/iris/v12"
)
