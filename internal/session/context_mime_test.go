package session

import "testing"

func TestMimeType(t *testing.T) {
	tests := []struct {
		it   contextItem
		want string
	}{
		{contextItem{Path: "/tmp/notes.txt"}, "text/plain"},
		{contextItem{Path: "/tmp/README.MD"}, "text/markdown"},
		{contextItem{Path: "/tmp/Makefile"}, "text/plain"},
		{contextItem{Path: "/tmp/a.json"}, "application/json"},
		{contextItem{Path: "/tmp/main.go", Filetype: "go"}, "text/x-go"},
		{contextItem{Path: "/tmp/x.txt", Filetype: "text"}, "text/plain"},
	}
	for _, tt := range tests {
		if got := mimeType(tt.it); got != tt.want {
			t.Errorf("mimeType(%+v) = %q, want %q", tt.it, got, tt.want)
		}
	}
}
