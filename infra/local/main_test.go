package main

import (
	"strings"
	"testing"
)

// -auth none hands every caller the local-dev owner: it may only listen on loopback.
func TestCheckAuthAddr(t *testing.T) {
	tests := []struct {
		auth, addr string
		wantErr    string
	}{
		{"none", "127.0.0.1:8787", ""},
		{"none", "localhost:8787", ""},
		{"none", "[::1]:8787", ""},
		{"none", "127.0.0.2:0", ""},
		{"none", "0.0.0.0:8787", "-auth none"},
		{"none", ":8787", "-auth none"},
		{"none", "[::]:8787", "-auth none"},
		{"none", "192.168.1.20:8787", "-auth none"},
		{"none", "dev.example:8787", "-auth none"},
		{"none", "8787", "-addr"},
		{"token", "0.0.0.0:8787", ""},
		{"token", ":8787", ""},
	}
	for _, tc := range tests {
		t.Run(tc.auth+" "+tc.addr, func(t *testing.T) {
			err := checkAuthAddr(tc.auth, tc.addr)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err %v, want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
