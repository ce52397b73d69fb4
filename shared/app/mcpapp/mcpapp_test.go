package mcpapp

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/vectors"
)

// A part left nil turns its tools off and leaves the server's field a nil
// interface (not a typed nil, which the server would call); one given turns
// them on. The Lambda and make dev build their servers with New.
func TestPartsTurnToolsOn(t *testing.T) {
	g := &graph.Graph{Core: &service.Core{}}
	cases := []struct {
		name string
		p    Parts
		on   bool
	}{
		{"none", Parts{}, false},
		{"all", Parts{Reports: &pipeline.Runner{}, Notify: &announce.Service{}, Indexes: &vectors.Tools{}}, true},
	}
	for _, c := range cases {
		s := New(g, c.p)
		if s.Features.Reports != c.on || (s.Reports != nil) != c.on {
			t.Errorf("%s: reports feature %v, runner %v; want %v", c.name, s.Features.Reports, s.Reports, c.on)
		}
		if s.Features.Vectors != c.on || (s.Indexes != nil) != c.on {
			t.Errorf("%s: vectors feature %v, tools %v; want %v", c.name, s.Features.Vectors, s.Indexes, c.on)
		}
		if (s.Notify != nil) != c.on {
			t.Errorf("%s: notify %v, want set %v", c.name, s.Notify, c.on)
		}
		if !s.Features.Uploads || !s.Features.Exports || !s.Features.SageMaker {
			t.Errorf("%s: features %+v, want uploads, exports and SageMaker always", c.name, s.Features)
		}
	}
}
