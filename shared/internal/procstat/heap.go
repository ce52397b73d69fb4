package procstat

import (
	"runtime/metrics"
	"sync"
	"syscall"
	"time"
)

// HeapPeak samples the live heap every 5 ms until the returned func is
// called, which gives the largest seen, in bytes.
func HeapPeak() func() uint64 {
	var mu sync.Mutex
	var top uint64
	stop, done := make(chan struct{}), make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			mu.Lock()
			top = max(top, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return top
	}
}

// CPUTime is the process's user and system CPU time so far: on a shared
// machine a benchmark's wall time also counts other processes.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
