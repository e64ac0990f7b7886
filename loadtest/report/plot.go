package report

import (
	"math"

	"github.com/cockroachdb/errors"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one named line.
type Series struct {
	Name string
	X, Y []float64
}

// LinePlot writes a PNG line chart. logX puts the X axis on a log scale
// (non-positive X values are moved to the smallest positive one; with
// none positive, as when no job waited, the axis stays linear).
func LinePlot(path, title, xLabel, yLabel string, series []Series, logX bool) error {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	minPos := math.Inf(1)
	for _, s := range series {
		for _, x := range s.X {
			if x > 0 && x < minPos {
				minPos = x
			}
		}
	}
	for i, s := range series {
		if len(s.X) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(s.X))
		for k := range s.X {
			x := s.X[k]
			if logX && x <= 0 && !math.IsInf(minPos, 1) {
				x = minPos // with no positive X at all the axis stays linear
			}
			xys[k] = plotter.XY{X: x, Y: s.Y[k]}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return errors.Wrapf(err, "plot %s", s.Name)
		}
		l.Color = plotutil.DarkColors[i%len(plotutil.DarkColors)]
		l.Width = vg.Points(1.5)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	headroom(p, maxY(series), len(series))
	if logX && !math.IsInf(minPos, 1) {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	return errors.Wrapf(p.Save(8*vg.Inch, 4.5*vg.Inch, path), "save %s", path)
}

// BarGroup is one named set of bar heights, one per category.
type BarGroup struct {
	Name   string
	Values []float64
}

// BarPlot writes a PNG grouped bar chart over the given categories.
func BarPlot(path, title, xLabel, yLabel string, categories []string, groups []BarGroup) error {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	// About 440 points of plot width are shared by the categories; each
	// group of bars fills 80 % of its category's slot.
	slot := min(80.0, 440/float64(max(len(categories), 1)))
	w := vg.Points(0.8 * slot / float64(max(len(groups), 1)))
	for i, g := range groups {
		vals := make(plotter.Values, len(categories))
		copy(vals, g.Values)
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return errors.Wrapf(err, "bars %s", g.Name)
		}
		b.Color = plotutil.DarkColors[i%len(plotutil.DarkColors)]
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(len(groups)-1)/2)
		p.Add(b)
		p.Legend.Add(g.Name, b)
	}
	p.NominalX(categories...)
	p.Legend.ThumbnailWidth = vg.Points(12)
	p.Y.Min = 0
	top := 0.0
	for _, g := range groups {
		for _, v := range g.Values {
			top = max(top, v)
		}
	}
	headroom(p, top, len(groups))
	return errors.Wrapf(p.Save(8*vg.Inch, 4.5*vg.Inch, path), "save %s", path)
}

func maxY(series []Series) float64 {
	top := math.Inf(-1)
	for _, s := range series {
		for _, y := range s.Y {
			top = max(top, y)
		}
	}
	return top
}

// headroom raises the Y axis above the data by the legend's height (a
// line per entry, about 6 % of the axis each) plus a margin, so the
// legend sits above the lines and the tallest bar is drawn whole, not cut
// by the frame or hidden under the legend.
func headroom(p *plot.Plot, top float64, entries int) {
	if math.IsInf(top, -1) || math.IsNaN(top) {
		return
	}
	lo := min(p.Y.Min, 0)
	span := top - lo
	if span <= 0 {
		span = 1
	}
	frac := 0.03 + 0.06*float64(entries)
	p.Y.Max = max(p.Y.Max, top+span*frac/(1-frac))
}
