package web

import (
	"bytes"
	"io"
	"sync"
)

// sharedRenders renders the live part of a page that looks the same to
// every viewer (fabric, queue, cluster) once per hub generation, however
// many viewers have it open: at 1,000 nodes the fabric page costs about
// 0.1 s of a core to render.
type sharedRenders struct {
	mu    sync.Mutex
	pages map[string]*sharedPage
}

type sharedPage struct {
	mu   sync.Mutex
	gen  uint64
	html []byte
	ok   bool
}

// render writes the page's live part as of generation gen, rendering it
// only if no viewer has yet at that generation.
func (r *sharedRenders) render(w io.Writer, page string, gen uint64, render func(io.Writer) error) error {
	r.mu.Lock()
	if r.pages == nil {
		r.pages = map[string]*sharedPage{}
	}
	p := r.pages[page]
	if p == nil {
		p = &sharedPage{}
		r.pages[page] = p
	}
	r.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ok || p.gen != gen {
		var buf bytes.Buffer
		if err := render(&buf); err != nil {
			return err
		}
		p.gen, p.html, p.ok = gen, buf.Bytes(), true
	}
	_, err := w.Write(p.html)
	return err
}
