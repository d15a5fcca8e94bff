package main

import (
	"context"
	"net"
	"net/http"
	"strconv"
)

// runNetHTTP serves with the standard library only: an http.ServeMux with Go 1.22
// route patterns ("/{$}": the root alone), html/template for the home page.
func runNetHTTP(ctx context.Context, l net.Listener) error {
	views, err := newStdTemplates()
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/values/{id}", func(w http.ResponseWriter, r *http.Request) {
		count(apiValues)
		writeBytes(w, "text/plain; charset=utf-8", valueBody)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		count(homePage)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := views.render(w, home); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeBytes(w, "text/plain; charset=utf-8", okBody)
	})
	mux.HandleFunc("GET /__stats", func(w http.ResponseWriter, r *http.Request) {
		writeBytes(w, "application/json", statsJSON())
	})
	mux.HandleFunc("POST /__stats/reset", func(w http.ResponseWriter, r *http.Request) {
		resetCounts()
		writeBytes(w, "application/json", statsJSON())
	})
	srv := &http.Server{Handler: mux}
	return serveUntilDone(ctx, func() error { return srv.Serve(l) }, srv.Shutdown)
}

var (
	valueBody = []byte("value")
	okBody    = []byte("ok")
)

func writeBytes(w http.ResponseWriter, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}
