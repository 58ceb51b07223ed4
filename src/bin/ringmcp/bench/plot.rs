//! `--report FILE.svg|FILE.html`: the latency percentile curve(s).
//!
//! x is the percentile on a "nines" scale (`-log10(1 - p)`: 0 = p0, 1 = p90, 2 = p99, 3 =
//! p99.9, 4 = p99.99), so the tail gets as much room as the median; y is the latency in µs on
//! a log scale, so ringmcp and the raw pipe stay readable side by side.

use std::path::Path;

use plotters::prelude::*;

use super::measure::Latencies;

/// Rightmost x: p99.99.
const MAX_NINES: f64 = 4.0;
/// Points per curve.
const STEPS: u32 = 400;

/// The kinds of report file, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Svg,
    Html,
}

impl Format {
    /// The format named by `path`'s extension.
    ///
    /// # Errors
    /// For any extension other than `.svg` and `.html`/`.htm`.
    pub(crate) fn of(path: &Path) -> Result<Format, String> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(Format::Svg),
            Some("html" | "htm") => Ok(Format::Html),
            _ => Err(format!("--report {}: the file must end in .svg or .html", path.display())),
        }
    }
}

/// One curve: its legend label and latencies.
pub(crate) struct Curve<'a> {
    pub(crate) label: &'a str,
    pub(crate) latencies: &'a Latencies,
}

/// `(nines, µs)` points of one curve.
fn points(latencies: &Latencies) -> Vec<(f64, f64)> {
    (0..=STEPS)
        .map(|i| {
            let x = MAX_NINES * f64::from(i) / f64::from(STEPS);
            let q = 1.0 - 10f64.powf(-x);
            (x, latencies.quantile_us(q).max(0.001))
        })
        .collect()
}

/// `p90`, `p99`, `p99.9`, `p99.99` for whole nines; in between, `floor(x)` decimals (at least
/// one): `p68.4`, `p99.68`, `p99.968`.
pub(crate) fn nines_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    if (x - x.round()).abs() < 1e-9 {
        let nines = x.round() as usize;
        match nines {
            0 => "p0".to_owned(),
            n => format!("p{:.*}", n.saturating_sub(2), p),
        }
    } else {
        let decimals = (x.floor() as usize).max(1);
        format!("p{p:.decimals$}")
    }
}

/// The SVG document.
///
/// # Errors
/// plotters' drawing errors, as text.
pub(crate) fn svg(title: &str, curves: &[Curve<'_>]) -> Result<String, String> {
    let series: Vec<(&str, Vec<(f64, f64)>)> =
        curves.iter().map(|c| (c.label, points(c.latencies))).collect();
    let ys = series.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y));
    let (lo, hi) = ys.fold((f64::MAX, 0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let (lo, hi) = if hi > 0.0 { (lo * 0.8, hi * 1.25) } else { (0.1, 10.0) };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (960, 560)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..MAX_NINES, (lo..hi).log_scale())
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_labels(5)
            .x_label_formatter(&|x| nines_label(*x))
            .y_label_formatter(&|y| crate::size::sig3(*y))
            .x_desc("percentile")
            .y_desc("latency (µs)")
            .draw()
            .map_err(e)?;
        let colours = [BLUE, RED, GREEN, MAGENTA];
        let series = (series.into_iter().enumerate())
            .map(|(i, (label, pts))| (label, colours[i % colours.len()], pts))
            .collect();
        lines(&mut chart, series, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(e)?;
    }
    Ok(out)
}

/// One line of a plot: its legend label, colour and points.
pub(crate) type Line<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

/// Draws each line, with its legend at `position`.
pub(crate) fn lines<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    series: Vec<Line<'_>>,
    position: SeriesLabelPosition,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    for (label, colour, pts) in series {
        chart
            .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
            .map_err(e)?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(e)
}

/// An HTML page with the summary text above the plot.
pub(crate) fn html(title: &str, summary: &str, svg: &str) -> String {
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title></head>\n\
         <body style=\"font-family: sans-serif\">\n<h1>{t}</h1>\n<pre>{s}</pre>\n{svg}\n</body></html>\n",
        t = escape(title),
        s = escape(summary),
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn formats_by_extension() {
        assert_eq!(Format::of(Path::new("/tmp/a.svg")), Ok(Format::Svg));
        assert_eq!(Format::of(Path::new("a.HTML")), Ok(Format::Html));
        assert!(Format::of(Path::new("a.png")).is_err());
        assert!(Format::of(Path::new("svg")).is_err());
    }

    #[test]
    fn nines_labels() {
        assert_eq!(nines_label(0.0), "p0");
        assert_eq!(nines_label(1.0), "p90");
        assert_eq!(nines_label(2.0), "p99");
        assert_eq!(nines_label(3.0), "p99.9");
        assert_eq!(nines_label(4.0), "p99.99");
        assert_eq!(nines_label(std::f64::consts::LOG10_2), "p50.0");
        assert_eq!(nines_label(3.5), "p99.968");
    }

    #[test]
    fn draws_an_svg_with_both_curves() {
        let mut a = Latencies::new();
        let mut b = Latencies::new();
        for i in 1..=2000u64 {
            a.record(Duration::from_micros(20 + i % 50));
            b.record(Duration::from_micros(10 + i % 20));
        }
        let curves =
            [Curve { label: "ringmcp", latencies: &a }, Curve { label: "raw pipe", latencies: &b }];
        let svg = svg("test <plot>", &curves).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        assert!(svg.contains("ringmcp") && svg.contains("raw pipe"));
        assert!(svg.contains("p99.9"));
        let page = html("t & t", "a < b", &svg);
        assert!(page.contains("a &lt; b") && page.contains("<svg"));
    }
}
