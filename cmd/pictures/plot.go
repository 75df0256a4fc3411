package main

import (
	"bytes"
	"fmt"
	"image/color"

	"github.com/limitspec/limitspec"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The size of a picture: two fit side by side in the README.
const (
	width  = 4.2 * vg.Inch
	height = 2.3 * vg.Inch
)

// The rows below the admitted requests: the denied ones (a denied
// request of cost 1 always leaves remaining 0), then the phases' names.
const (
	deniedRow = -2
	phaseRow  = -3.8
)

// The font: Liberation Sans (whose metrics lay the text out) in the
// SVG, falling back to Arial, of the same metrics, where it is missing.
var (
	sans             = font.Font{Typeface: "Liberation", Variant: "Sans"}
	liberationFamily = []byte("font-family:Liberation Sans;")
	fallbackFamilies = []byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;")
)

var (
	admittedColor = color.RGBA{0x00, 0x72, 0xb2, 0xff} // blue
	deniedColor   = color.RGBA{0xd5, 0x5e, 0x00, 0xff} // vermilion
	delayColor    = color.RGBA{0x00, 0x9e, 0x73, 0xff} // bluish green
	gridColor     = color.Gray{0xc8}
)

// picture draws one limit's decisions of the trace as an SVG.
func picture(limit limitspec.Limit, ds []decision) ([]byte, error) {
	p, err := picturePlot(limit, ds)
	if err != nil {
		return nil, err
	}
	return encode(p)
}

// picturePlot is the plot of picture.
func picturePlot(limit limitspec.Limit, ds []decision) (*plot.Plot, error) {
	p := plot.New()
	axes(p)
	admitted, denied, delays := series(ds)
	p.Title.Text = fmt.Sprintf("%s: %d of %d admitted\n%s", limit.Algorithm(), len(admitted), len(ds), caption(limit))
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	labels, err := phaseLabels()
	if err != nil {
		return nil, err
	}
	p.Add(grid, labels)
	if limitspec.Shapes(limit) {
		if err := addScatter(p, delays, draw.TriangleGlyph{}, delayColor, "delay (s)"); err != nil {
			return nil, err
		}
	}
	if err := addScatter(p, admitted, draw.CircleGlyph{}, admittedColor, ""); err != nil {
		return nil, err
	}
	if err := addScatter(p, denied, draw.CrossGlyph{}, deniedColor, ""); err != nil {
		return nil, err
	}
	return p, nil
}

// encode draws p as an SVG of the pictures' size, naming the fallback
// fonts and embedding none.
func encode(p *plot.Plot) ([]byte, error) {
	var buf bytes.Buffer
	c := vgsvg.New(width, height)
	p.Draw(draw.New(c))
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(buf.Bytes(), liberationFamily, fallbackFamilies), nil
}

// caption is the second line of limit's title: the limit, as Go writes
// it; for a limit of slots, how many the requests hold and how long.
func caption(limit limitspec.Limit) string {
	if c, ok := limit.(limitspec.Concurrency); ok {
		return fmt.Sprintf("%d in flight, each request holding its slot %v s", c.Limit, work.Seconds())
	}
	return describe(limit)
}

// axes gives every picture the same axes: time over the trace, and the
// remaining after each admission, above a row of denied requests.
func axes(p *plot.Plot) {
	fonts(p)
	p.X.Min, p.X.Max = 0, traceLength.Seconds()
	p.Y.Min, p.Y.Max = phaseRow-0.7, 11.5
	p.X.Label.Text = "time (s); the grid marks the epoch-aligned windows of 10 s"
	p.Y.Label.Text = "remaining"
	var xs []plot.Tick
	for s := 0; s <= int(traceLength.Seconds()); s += 10 {
		xs = append(xs, plot.Tick{Value: float64(s), Label: fmt.Sprint(s)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xs)
	p.Y.Tick.Marker = plot.ConstantTicks{
		{Value: deniedRow, Label: "denied"}, {Value: 0, Label: "0"},
		{Value: 5, Label: "5"}, {Value: 10, Label: "10"},
	}
	p.Legend.Top = true
}

// fonts sets every picture's fonts: the title in 8 points, the rest in 7.
func fonts(p *plot.Plot) {
	p.Title.TextStyle.Font = font.From(sans, 8)
	for _, f := range []*font.Font{&p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		*f = font.From(sans, 7)
	}
}

// series splits decisions into the points drawn: the admitted at their
// remaining, the denied on their row, and each admission's delay in s.
func series(ds []decision) (admitted, denied, delays plotter.XYs) {
	for _, d := range ds {
		x := d.at.Seconds()
		if !d.allowed {
			denied = append(denied, plotter.XY{X: x, Y: deniedRow})
			continue
		}
		admitted = append(admitted, plotter.XY{X: x, Y: float64(d.remaining)})
		delays = append(delays, plotter.XY{X: x, Y: d.delay.Seconds()})
	}
	return admitted, denied, delays
}

// addScatter draws xys with glyph in clr, named in the legend unless
// name is empty.
func addScatter(p *plot.Plot, xys plotter.XYs, glyph draw.GlyphDrawer, clr color.Color, name string) error {
	if len(xys) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	s.GlyphStyle = draw.GlyphStyle{Shape: glyph, Color: clr, Radius: vg.Points(1.8)}
	p.Add(s)
	if name != "" {
		p.Legend.Add(name, s)
	}
	return nil
}

// phaseLabels names the trace's phases below the points.
func phaseLabels() (*plotter.Labels, error) {
	var xyl plotter.XYLabels
	for i, ph := range trace {
		xyl.XYs = append(xyl.XYs, plotter.XY{X: middle(i).Seconds(), Y: phaseRow})
		xyl.Labels = append(xyl.Labels, ph.name)
	}
	l, err := plotter.NewLabels(xyl)
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font = font.From(sans, 6)
		l.TextStyle[i].Color = color.Gray{0x50}
		l.TextStyle[i].XAlign = draw.XCenter
		l.TextStyle[i].YAlign = draw.YCenter
	}
	return l, nil
}
