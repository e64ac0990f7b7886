package web

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/services/web/view"
)

func TestGPUCellsEscapeWhatTheyShow(t *testing.T) {
	n := view.Node{Name: "n1", GPUs: []view.GPU{
		{Index: 0, JobID: "j-1", Color: view.JobColor("j-1"), Class: "held", Title: `n1 GPU 0: job j-1 ("quoted" <name>)`},
		{Index: 1, Class: "unhealthy", Title: `n1 GPU 1: unhealthy: <script>alert(1)</script> & "x"`},
		{Index: 2, JobID: "j-2", Color: "red;background:url(x)", Class: "held", Title: "t"},
	}}
	got := string(gpuCells(n))
	want := `<a class="gpu held" href="/jobs/j-1" data-job="j-1" style="background:` + view.JobColor("j-1") + `" title="n1 GPU 0: job j-1 (&#34;quoted&#34; &lt;name&gt;)"></a>` +
		`<span class="gpu unhealthy" title="n1 GPU 1: unhealthy: &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;x&#34;"></span>` +
		`<a class="gpu held" href="/jobs/j-2" data-job="j-2" style="" title="t"></a>`
	if got != want {
		t.Errorf("cells:\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "<script>") {
		t.Error("a reason reached the page unescaped")
	}
}
