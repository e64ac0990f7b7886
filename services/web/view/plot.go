package view

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Plot geometry: the SVG's viewBox is PlotW × PlotH.
const (
	PlotW = 600
	PlotH = 120
)

// Point is one value at one time.
type Point struct {
	At time.Time
	Y  float64
}

// Plot is a line over time, ready for an SVG polyline.
type Plot struct {
	Title string
	// Points is the polyline's points attribute; empty when there is
	// nothing to draw.
	Points string
	// Max labels the top of the axis, From and To the time span.
	Max, From, To string
	Last          string
	N             int
}

// BuildPlot scales points (sorted here by time, then value, so that the
// same points draw the same line in any order) into the plot's box: time
// across, 0..top up (top 0: the largest value, at least 1).
func BuildPlot(title, unit string, pts []Point, top float64) Plot {
	p := Plot{Title: title, N: len(pts)}
	if len(pts) == 0 {
		return p
	}
	pts = slices.Clone(pts)
	slices.SortStableFunc(pts, func(a, b Point) int { return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Y, b.Y)) })
	if top <= 0 {
		top = 1
		for _, pt := range pts {
			top = max(top, pt.Y)
		}
	}
	t0, t1 := pts[0].At, pts[len(pts)-1].At
	span := t1.Sub(t0)
	var b strings.Builder
	for i, pt := range pts {
		x := float64(PlotW) / 2
		if span > 0 {
			x = float64(PlotW) * float64(pt.At.Sub(t0)) / float64(span)
		}
		y := float64(PlotH) * (1 - min(pt.Y, top)/top)
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", x, y)
	}
	p.Points = b.String()
	if len(pts) == 1 { // one point: a level line across, so it shows
		y := float64(PlotH) * (1 - min(pts[0].Y, top)/top)
		p.Points = fmt.Sprintf("0.0,%.1f %d.0,%.1f", y, PlotW, y)
	}
	p.Max = fmt.Sprintf("%.4g%s", top, unit)
	p.Last = fmt.Sprintf("%.4g%s", pts[len(pts)-1].Y, unit)
	p.From, p.To = t0.UTC().Format("15:04:05"), t1.UTC().Format("15:04:05")
	return p
}
