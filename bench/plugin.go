package main

import "time"

// pluginRun carries the baselines into the plugin measurements.
type pluginRun struct {
	file, last string
	raw        time.Duration
	native     displayResult
	nativeLag  time.Duration
	floodCmd   string
	flood      time.Duration
}

// runPlugin measures agentrun itself; filled in once the front end lands.
func runPlugin(p pluginRun) error { return nil }
