package bedrock

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func titanOutput(dim int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := []byte(`{"embedding":[`)
	for d := range dim {
		if d > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, r.Float64()*2-1, 'g', 8, 32)
	}
	return append(b, `],"inputTextTokenCount":42}`...)
}

// BenchmarkVector1024 reads one 1,024-dimension Titan embedding.
func BenchmarkVector1024(b *testing.B) {
	out := titanOutput(1024)
	b.SetBytes(int64(len(out)))
	for i := 0; i < b.N; i++ {
		if v, err := Vector(out); err != nil || len(v) != 1024 {
			b.Fatal(err)
		}
	}
}
