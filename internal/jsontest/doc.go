// Package jsontest holds the JSON helpers tests of AHP shapes share:
// encode a value and compare two documents by value.
package jsontest
