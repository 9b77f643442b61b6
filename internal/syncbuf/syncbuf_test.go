package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestWritersAndAReader: writes from several goroutines while another
// reads all arrive whole (and -race sees no race).
func TestWritersAndAReader(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("ab"))
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			_ = b.String()
		}
	}()
	wg.Wait()
	<-done
	if s := b.String(); len(s) != 800 || strings.Count(s, "ab") != 400 {
		t.Errorf("%d bytes, %d whole writes; want 800, 400", len(s), strings.Count(s, "ab"))
	}
}
