package main

import (
	"sort"
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
