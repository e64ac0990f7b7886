package web

import (
	"html"
	"html/template"
	"net/url"
	"strings"

	"github.com/lockstep-dev/lockstep/services/web/view"
)

// gpuCells is one node's GPU cells as HTML. The fabric page has one per
// GPU (8,000 at 1,000 nodes), and html/template's reflection-driven
// escaping per cell made it about ten times slower than the rest of the
// page; so this writes them directly, escaping every value that comes
// from outside (titles carry node names and health-check reasons, which
// agents report) exactly as the template would in these attributes.
func gpuCells(n view.Node) template.HTML {
	var b strings.Builder
	b.Grow(len(n.GPUs) * 96)
	attr := func(name, value string) {
		b.WriteString(` ` + name + `="`)
		b.WriteString(html.EscapeString(value))
		b.WriteByte('"')
	}
	for _, g := range n.GPUs {
		if g.JobID != "" {
			b.WriteString(`<a class="gpu held"`)
			attr("href", "/jobs/"+url.PathEscape(g.JobID))
			attr("data-job", g.JobID)
			attr("style", string(background(g.Color)))
			attr("title", g.Title)
			b.WriteString(`></a>`)
			continue
		}
		b.WriteString(`<span`)
		attr("class", "gpu "+g.Class)
		attr("title", g.Title)
		b.WriteString(`></span>`)
	}
	return template.HTML(b.String())
}
