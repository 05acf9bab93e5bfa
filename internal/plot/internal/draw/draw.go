// Package draw holds what the plotting programs share: a palette, and a
// grid of gonum plots saved as one PNG.
package draw

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Palette is a set of colours that stay apart for readers with the common
// colour-vision deficiencies (Okabe and Ito, 2008).
var Palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermilion
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{0, 0, 0, 255},       // black
}

// SaveGrid draws rows of plots (nil leaves a cell empty), each cellW by
// cellH, into the PNG file name.
func SaveGrid(name string, rows [][]*plot.Plot, cellW, cellH vg.Length) error {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return fmt.Errorf("draw: %s: no plot", name)
	}
	cols := len(rows[0])
	img := vgimg.New(cellW*vg.Length(cols), cellH*vg.Length(len(rows)))
	dc := draw.New(img)
	t := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(rows, t, dc)
	for i, row := range rows {
		for j, p := range row {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
