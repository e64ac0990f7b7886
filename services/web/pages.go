package web

import (
	"bytes"
	"embed"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"regexp"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/web/view"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFiles embed.FS

// staticFS is the script and style sheet, served under /static/.
func staticFS() fs.FS {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// pageData is what every page template gets: the layout's fields and the
// page's own model (Body).
type pageData struct {
	Title, Nav string
	Viewer     view.Viewer
	// Live is the event stream that keeps the page current ("" for none).
	Live string
	Body any
	// Next is where sign-in returns to.
	Next string
}

// pages holds one template set per page: the layout plus the page's file,
// whose "live" template is also what each update re-renders.
type pages struct {
	sets map[string]*template.Template
}

// pageNames are the templates/ files besides the layout.
var pageNames = []string{"fabric", "queue", "job", "cluster", "signin"}

// parsePages parses the embedded templates.
func parsePages() (*pages, error) {
	p := &pages{sets: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(template.FuncMap{"bg": background, "cells": gpuCells}).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, errors.Wrapf(err, "template %s", name)
		}
		p.sets[name] = t
	}
	return p, nil
}

// jobColor is the form of view.JobColor's colours.
var jobColor = regexp.MustCompile(`^hsl\(\d{1,3},\d{1,3}%,\d{1,3}%\)$`)

// background is a style attribute's value painting a job's colour.
// html/template refuses CSS values it cannot prove harmless; this one is
// checked against the only form the colours take.
func background(color string) template.CSS {
	if !jobColor.MatchString(color) {
		return ""
	}
	return template.CSS("background:" + color)
}

// mustPages parses the embedded templates, which the package's tests
// parse too: a template that does not parse never ships.
func mustPages() *pages {
	p, err := parsePages()
	if err != nil {
		panic(err)
	}
	return p
}

// render writes a whole page.
func (p *pages) render(w http.ResponseWriter, name string, d pageData, status int) {
	var buf bytes.Buffer
	if err := p.sets[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// live writes a page's live part, the content of an update.
func (p *pages) live(w io.Writer, name string, d pageData) error {
	return p.sets[name].ExecuteTemplate(w, "live", d)
}
