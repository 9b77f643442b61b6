//go:build linux

package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// p99ms returns the 99th percentile of samples given in milliseconds.
func p99ms(samples []float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	i := int(float64(len(s)-1) * 0.99)
	return time.Duration(s[i] * float64(time.Millisecond))
}

// ratio formats a/b.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// median returns the middle of ds (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// list formats ds in ms: "3: 450 454 470".
func list(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.0f", ms(d))
	}
	return fmt.Sprintf("%d: %s", len(ds), strings.Join(parts, " "))
}

// listTenths formats ds in ms with one decimal: "1.4 2.0 1.7".
func listTenths(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1f", ms(d))
	}
	return strings.Join(parts, " ")
}
