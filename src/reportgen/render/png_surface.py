"""CairoSVG's PNG surface, with the PNG written by ``png.opaque_png`` when it can be.

Apart from png.py so that CairoSVG (and cairo) are imported only by what renders."""

from __future__ import annotations

from cairosvg.surface import PNGSurface, Surface

from reportgen.render.png import opaque_png


class OpaquePNGSurface(PNGSurface):
    def finish(self):
        if self.output is not None:
            data = opaque_png(self.cairo)
            if data is None:
                self.cairo.write_to_png(self.output)
            else:
                self.output.write(data)
        return Surface.finish(self)
