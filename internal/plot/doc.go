// Package plot draws the project's charts: series of points and lines over
// a linear or logarithmic x axis and a linear or logarithmic y axis, as SVG
// text or as a PNG image. It uses the standard library alone (the PNG's
// text comes from a small bitmap font kept in font.go), so library packages
// such as the store's debug page can draw with it.
//
// A logarithmic y axis reaches down to 1e-300 and labels its ticks as
// powers of ten; a logarithmic x axis labels 1, 2 and 5 times powers of ten
// in plain numbers. Values at or below zero have no place on a logarithmic
// axis and are left out.
package plot
