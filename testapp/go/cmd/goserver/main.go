// Command goserver is the Go side of the "Go (Iris) vs .NET Core" companion study
// (2017): one binary, three frameworks chosen on the command line, each serving
//
//	GET /api/values/{id}  "value" (text/plain), the article's first test
//	GET /                 a home page in the shape of the article's second test (the MVC
//	                      template's home page through its layout; the same bytes as
//	                      TestApp's Razor /)
//	GET /health           "ok" (not counted)
//	GET /__stats          {"total": N, "endpoints": {"/api/values": n, "/": n}}
//	POST /__stats/reset   zeroes the counters, answers the zeroed snapshot
//
// Command line, errors and exit codes follow TestApp (testapp/dotnet): --urls
// http://HOST:PORT (or http://unix:/PATH); exit 2 on a bad command line (one line
// with the usage), 3 when the address is in use (one line naming the port), 1 on
// any other start failure, 0 after SIGTERM/SIGINT. Nothing is logged per request.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const usage = "usage: goserver --framework iris-mvc|iris|nethttp [--urls http://HOST:PORT|http://unix:/PATH]"

// frameworks: name -> the server it runs on an open listener until ctx is done.
var frameworks = map[string]func(ctx context.Context, l net.Listener) error{
	"iris-mvc": runIrisMVC,
	"iris":     runIris,
	"nethttp":  runNetHTTP,
}

// shutdownGrace bounds the graceful shutdown after SIGTERM: in-flight requests finish,
// idle keep-alive connections are closed at once.
const shutdownGrace = 5 * time.Second

type options struct {
	framework string
	urls      string
}

type usageError string

func (e usageError) Error() string { return string(e) }

// parseArgs reads `--key value` and `--key=value`, like TestApp.
func parseArgs(args []string) (options, error) {
	o := options{urls: "http://127.0.0.1:5000"}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "--") || len(arg) == 2 {
			return o, usageError(fmt.Sprintf("unexpected argument '%s'", arg))
		}
		key, value, hasValue := strings.Cut(arg[2:], "=")
		if key != "framework" && key != "urls" {
			return o, usageError(fmt.Sprintf("unknown option '--%s'", key))
		}
		if !hasValue {
			if i+1 >= len(args) {
				return o, usageError(fmt.Sprintf("option '--%s' needs a value", key))
			}
			i++
			value = args[i]
		}
		switch key {
		case "framework":
			if _, ok := frameworks[value]; !ok {
				return o, usageError(fmt.Sprintf("bad --framework '%s' (want iris-mvc, iris or nethttp)", value))
			}
			o.framework = value
		case "urls":
			if _, _, err := listenAddress(value); err != nil {
				return o, err
			}
			o.urls = value
		}
	}
	if o.framework == "" {
		return o, usageError("--framework is required")
	}
	return o, nil
}

// listenAddress maps a --urls value to net.Listen's network and address.
func listenAddress(url string) (network, address string, err error) {
	bad := usageError(fmt.Sprintf("bad --urls '%s' (want one http://HOST:PORT or http://unix:/PATH)", url))
	if len(url) < 7 || !strings.EqualFold(url[:7], "http://") {
		return "", "", bad
	}
	rest := strings.TrimSuffix(url[7:], "/")
	if path, ok := strings.CutPrefix(rest, "unix:"); ok {
		if !strings.HasPrefix(path, "/") || len(path) < 2 {
			return "", "", bad
		}
		return "unix", path, nil
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil || port == "" || strings.ContainsAny(rest, "/;") {
		return "", "", bad
	}
	if host == "*" || host == "+" { // ASP.NET's spellings of "every interface"
		host = ""
	}
	return "tcp", net.JoinHostPort(host, port), nil
}

// listen opens the listener; the error is one line naming the URL (and the port when in use).
func listen(url string) (net.Listener, int, error) {
	network, address, _ := listenAddress(url)
	if network == "unix" {
		removeStaleSocket(address)
	}
	l, err := net.Listen(network, address)
	if err == nil {
		return l, 0, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		if network == "unix" {
			return nil, 3, fmt.Errorf("cannot listen on %s: the socket path is already in use", url)
		}
		_, port, _ := net.SplitHostPort(address)
		return nil, 3, fmt.Errorf("cannot listen on %s: port %s is already in use", url, port)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	return nil, 1, fmt.Errorf("cannot listen on %s: %v", url, err)
}

// removeStaleSocket removes a socket file a killed run left behind (nothing answers on it).
func removeStaleSocket(path string) {
	if _, err := os.Stat(path); err != nil {
		return
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		os.Remove(path)
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Println(usage)
		return 0
	}
	o, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "goserver: %v; %s\n", err, usage)
		return 2
	}
	l, code, err := listen(o.urls)
	if err != nil {
		fmt.Fprintf(stderr, "goserver: %v\n", err)
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := frameworks[o.framework](ctx, l); err != nil {
		fmt.Fprintf(stderr, "goserver: %s: %s\n", o.framework, strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	return 0
}

// serveUntilDone runs serve until it fails or ctx is done, then shuts down within shutdownGrace.
// serve's http.ErrServerClosed (after shutdown) is a clean stop.
func serveUntilDone(ctx context.Context, serve func() error, shutdown func(context.Context) error) error {
	served := make(chan error, 1)
	go func() { served <- serve() }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := shutdown(grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	select {
	case err := <-served:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-grace.Done():
	}
	return nil
}
