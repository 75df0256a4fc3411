package main

import (
	"context"
	"fmt"
	"image/color"
	"time"

	"github.com/limitspec/limitspec"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The LLM gateway's picture: one API key's calls against a budget of
// tokens, each call reserving its max_tokens before it calls the model
// and committing, once answered, the tokens it used (docs/semantics.md,
// "Holds"). It is drawn apart from the limits' pictures, on axes of its
// own: tokens over a minute.

// gatewayLimit is the gateway's budget per API key: 1000 tokens a
// minute, 1000 at once.
var gatewayLimit = limitspec.TokenBucket{Capacity: 1000, RefillTokens: 1000, Refill: time.Minute}

// maxTokens is what every call reserves: its max_tokens.
const maxTokens = 400

// gatewayLength is the time the gateway's picture spans, and watchEvery
// how often it peeks at the budget between calls (the refill is a slope).
const (
	gatewayLength = 60 * time.Second
	watchEvery    = 500 * time.Millisecond
)

// gatewayCall is one call through the gateway: it reserves maxTokens at
// `at` and, when admitted, ends `took` later: by a commit of the tokens
// it used, or by a release (the model failed: used 0, nothing charged).
type gatewayCall struct {
	at, took time.Duration
	end      limitspec.HoldOp
	used     int64
}

// gatewayCalls are the API key's calls, call-1 to call-11, in time
// order; each says how it would end if admitted. The limiter decides
// which are: two calls hold 800 of the 1000 tokens at 1 s, so call-3 is
// denied, as are call-5 and call-8, each while a call holds 400 (worked
// out in TestGatewaySeries). A denied call is not retried. call-4's
// model fails: it releases its hold.
var gatewayCalls = []gatewayCall{
	{0 * time.Second, 4 * time.Second, limitspec.Commit, 120},
	{1 * time.Second, 6 * time.Second, limitspec.Commit, 380},
	{2 * time.Second, 5 * time.Second, limitspec.Commit, 240},
	{5 * time.Second, 5 * time.Second, limitspec.Release, 0},
	{9 * time.Second, 4 * time.Second, limitspec.Commit, 260},
	{12 * time.Second, 5 * time.Second, limitspec.Commit, 200},
	{20 * time.Second, 7 * time.Second, limitspec.Commit, 90},
	{24 * time.Second, 5 * time.Second, limitspec.Commit, 310},
	{30 * time.Second, 5 * time.Second, limitspec.Commit, 200},
	{38 * time.Second, 6 * time.Second, limitspec.Commit, 200},
	{47 * time.Second, 4 * time.Second, limitspec.Commit, 150},
}

// gateway runs gatewayCalls through a holding policy of gatewayLimit,
// in time order, watching the budget every watchEvery and around each
// call, to the picture's end. Calls are named call-1, call-2...
func gateway(ctx context.Context) (samples []sample, events []event, err error) {
	run, err := newHoldRun("llm", gatewayLimit, "key")
	if err != nil {
		return nil, nil, err
	}
	defer run.close()
	run.every = watchEvery
	for i, c := range gatewayCalls {
		id := fmt.Sprint("call-", i+1)
		if _, err := run.reserve(ctx, c.at, id, maxTokens, ending{c.at + c.took, id, c.end, c.used}); err != nil {
			return nil, nil, err
		}
	}
	if err := run.until(ctx, gatewayLength); err != nil {
		return nil, nil, err
	}
	return run.samples, run.events, nil
}

// The rows of the gateway's picture below 0 tokens, of its calls: the
// reserves admitted, those denied, and the holds' ends.
const (
	reserveRow  = -170
	refusedRow  = -340
	endRow      = -510
	gatewayYMax = 1400
)

var (
	heldColor    = color.RGBA{0xcc, 0x79, 0xa7, 0xff} // reddish purple
	releaseColor = color.Gray{0x80}
)

// gatewayMarks are how each call is drawn, by its operation and whether
// it was admitted: on which row, by what glyph, in what color, and under
// what name in the legend ("" for none: its row names it).
var gatewayMarks = []struct {
	op      limitspec.HoldOp
	allowed bool
	row     float64
	glyph   draw.GlyphDrawer
	color   color.Color
	name    string
}{
	{limitspec.Reserve, true, reserveRow, draw.CircleGlyph{}, admittedColor, ""},
	{limitspec.Reserve, false, refusedRow, draw.CrossGlyph{}, deniedColor, ""},
	{limitspec.Commit, true, endRow, draw.TriangleGlyph{}, delayColor, ""},
	{limitspec.Release, true, endRow, draw.RingGlyph{}, releaseColor, "release"},
}

// gatewayPicture runs the gateway's calls and draws them as an SVG: the
// tokens remaining and held over time, and each call on its row.
func gatewayPicture(ctx context.Context) ([]byte, error) {
	samples, events, err := gateway(ctx)
	if err != nil {
		return nil, err
	}
	p, err := gatewayPlot(samples, events)
	if err != nil {
		return nil, err
	}
	return encode(p)
}

// gatewayPlot is the plot of gatewayPicture.
func gatewayPlot(samples []sample, events []event) (*plot.Plot, error) {
	p := plot.New()
	gatewayAxes(p)
	reserves, admitted, committed := 0, 0, int64(0)
	for _, e := range events {
		switch {
		case e.op == limitspec.Reserve:
			reserves++
			if e.allowed {
				admitted++
			}
		case e.op == limitspec.Commit:
			committed += e.amount
		}
	}
	p.Title.Text = fmt.Sprintf("llm gateway: %d of %d calls admitted, each reserving %d tokens; %d used\n%s per API key",
		admitted, reserves, maxTokens, committed, describe(gatewayLimit))
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	p.Add(grid)
	var remaining, held plotter.XYs
	for _, s := range samples {
		remaining = append(remaining, plotter.XY{X: s.at.Seconds(), Y: float64(s.remaining)})
		held = append(held, plotter.XY{X: s.at.Seconds(), Y: float64(s.held)})
	}
	for _, l := range []struct {
		xys   plotter.XYs
		color color.Color
		name  string
	}{
		{held, heldColor, "tokens held"},
		{remaining, admittedColor, "tokens remaining"},
	} {
		if err := addLine(p, l.xys, l.color, l.name); err != nil {
			return nil, err
		}
	}
	for _, m := range gatewayMarks {
		var xys plotter.XYs
		for _, e := range events {
			if e.op == m.op && e.allowed == m.allowed {
				xys = append(xys, plotter.XY{X: e.at.Seconds(), Y: m.row})
			}
		}
		if err := addScatter(p, xys, m.glyph, m.color, m.name); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// gatewayAxes are the gateway's axes: time over its minute, and tokens,
// above the rows of its calls.
func gatewayAxes(p *plot.Plot) {
	fonts(p)
	p.X.Min, p.X.Max = 0, gatewayLength.Seconds()
	p.Y.Min, p.Y.Max = endRow-120, gatewayYMax
	p.X.Label.Text = "time (s); each call reserves its max_tokens, then commits what it used"
	p.Y.Label.Text = "tokens"
	var xs []plot.Tick
	for s := 0; s <= int(gatewayLength.Seconds()); s += 10 {
		xs = append(xs, plot.Tick{Value: float64(s), Label: fmt.Sprint(s)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xs)
	p.Y.Tick.Marker = plot.ConstantTicks{
		{Value: endRow, Label: "commit"}, {Value: refusedRow, Label: "denied"}, {Value: reserveRow, Label: "reserve"},
		{Value: 0, Label: "0"}, {Value: 500, Label: "500"}, {Value: 1000, Label: "1000"},
	}
	p.Legend.Top = true
}

// addLine draws xys as a line in clr, named in the legend.
func addLine(p *plot.Plot, xys plotter.XYs, clr color.Color, name string) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.LineStyle = draw.LineStyle{Color: clr, Width: vg.Points(1)}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}
