package main

import (
	"strconv"
	"sync/atomic"
)

// Served requests per endpoint, as TestApp's RequestCounter: one atomic add per
// counted request, done by the endpoint's own handler (so only requests the
// framework routed there count). /api/values/{id} counts as /api/values.
const (
	apiValues = iota
	homePage
	endpointCount
)

var endpointNames = [endpointCount]string{"/api/values", "/"}

var counts [endpointCount]atomic.Int64

func count(endpoint int) { counts[endpoint].Add(1) }

func resetCounts() {
	for i := range counts {
		counts[i].Store(0)
	}
}

// statsJSON is {"total": N, "endpoints": {"/api/values": n, "/": n}}, the
// shape (and key order) of TestApp's /__stats.
func statsJSON() []byte {
	var values [endpointCount]int64
	var total int64
	for i := range counts {
		values[i] = counts[i].Load()
		total += values[i]
	}
	b := make([]byte, 0, 96)
	b = append(b, `{"total":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"endpoints":{`...)
	for i, name := range endpointNames {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, name)
		b = append(b, ':')
		b = strconv.AppendInt(b, values[i], 10)
	}
	return append(b, "}}"...)
}
