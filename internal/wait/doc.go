// Package wait is the one way tests wait for something to become true:
// poll a check until it holds or a timeout passes, then fail the test
// saying what was awaited and what the check last saw.
package wait
