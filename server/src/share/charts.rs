//! The report's charts as ECharts options, built in Rust with `charming`
//! and sent to the browser as JSON; the page's script only hands each to
//! ECharts. Chart coordinates are floats because ECharts draws with them;
//! every figure a person reads as text (the tables, the headline) comes
//! from the decimal values, never from these.

use charming::{
    Chart,
    component::{Axis, Grid, Legend},
    datatype::DataPointItem,
    element::{AxisType, Label, LabelPosition, Tooltip, Trigger},
    series::{
        Graph, GraphCategory, GraphData, GraphLayout, GraphLayoutForce, GraphLink, GraphNode, Line,
        Pie,
    },
};
use rust_decimal::prelude::ToPrimitive as _;

use super::report::{Report, mint_label, point_value};

/// Every chart of a report, as JSON text for `<script type="application/json">`.
pub struct ChartJson {
    pub value: String,
    pub allocation: String,
    pub flows: String,
}

/// JSON safe inside a `<script>` element: no `<` can close it.
///
/// Every tooltip is drawn on the chart's canvas (`renderMode: richText`),
/// not as HTML: ECharts' HTML tooltip writes `style="…"` attributes into
/// its markup, which the share page's CSP (`style-src 'self'`, no
/// `'unsafe-inline'`) refuses, one console error per line hovered, and the
/// lines then run together without their layout. charming has no setter
/// for `renderMode`, so it is added to the serialized option.
pub fn script_json(chart: &Chart) -> String {
    option_value(chart).to_string().replace('<', "\\u003c")
}

/// The chart's option as JSON, its tooltips drawn on the canvas (see
/// [`script_json`]).
pub fn option_value(chart: &Chart) -> serde_json::Value {
    let mut option = serde_json::to_value(chart).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(tooltip) = option.get_mut("tooltip") {
        let canvas = |t: &mut serde_json::Value| {
            if let Some(t) = t.as_object_mut() {
                t.insert("renderMode".to_owned(), "richText".into());
            }
        };
        match tooltip {
            serde_json::Value::Array(list) => list.iter_mut().for_each(canvas),
            other => canvas(other),
        }
    }
    option
}

pub fn charts(report: &Report) -> ChartJson {
    ChartJson {
        value: script_json(&value_chart(report)),
        allocation: script_json(&allocation_chart(report)),
        flows: script_json(&flow_chart(report)),
    }
}

/// The value over the range, in the report's denomination.
pub fn value_chart(report: &Report) -> Chart {
    let days: Vec<String> = report
        .value
        .points
        .iter()
        .map(|p| p.at.get(..10).unwrap_or(&p.at).to_owned())
        .collect();
    // A day without a value is a gap in the line, never a fall to zero.
    let values: Vec<Option<f64>> = report
        .value
        .points
        .iter()
        .map(|p| point_value(p, report.denominate).and_then(|d| d.to_f64()))
        .collect();
    let mut y = Axis::new()
        .type_(AxisType::Value)
        .name(report.summary.unit.clone());
    if let Some(axis) = fitted_axis(values.iter().flatten().copied()) {
        // Bounds on the tick grid, and the grid given: ECharts then labels
        // exactly min, min + interval, …, max, so no bound's label sits
        // beside a tick's (211,000 under 220,000).
        y = y.min(axis.min).max(axis.max).interval(axis.interval);
    }
    Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .grid(
            Grid::new()
                .left("4%")
                .right("4%")
                .top("10%")
                .bottom("12%")
                .contain_label(true),
        )
        .x_axis(Axis::new().type_(AxisType::Category).data(days))
        .y_axis(y)
        .series(
            Line::new()
                .name(format!("Value ({})", report.summary.unit))
                .show_symbol(false)
                .data(values),
        )
}

/// A value axis fitted to the data: bounds and the tick interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FittedAxis {
    pub min: f64,
    pub max: f64,
    pub interval: f64,
}

/// The value axis fitted to the data rather than drawn from zero, so a
/// swing from 82,000 to 93,000 reads as the 13% it is. The data's range is
/// padded by a tenth of it on each side (a flat series by 5% of its
/// level), then cut into about five intervals of a round size (1, 2, 2.5
/// or 5 times a power of ten) and both bounds rounded out to that grid:
/// every label the axis prints is a round tick, the bounds included, so
/// two labels never crowd each other. Never below zero for values that are
/// not. `None` without finite values.
pub fn fitted_axis(values: impl Iterator<Item = f64>) -> Option<FittedAxis> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })?;
    let span = hi - lo;
    let pad = if span > 0.0 {
        span / 10.0
    } else {
        (hi.abs() / 20.0).max(0.01)
    };
    let interval = nice_step((hi - lo + 2.0 * pad) / 5.0);
    let mut min = ((lo - pad) / interval).floor() * interval;
    if lo >= 0.0 && min < 0.0 {
        min = 0.0;
    }
    let max = ((hi + pad) / interval).ceil() * interval;
    // Products of a fractional step carry binary noise (0.48000000000000004);
    // the labels print what is sent, so it is rounded to the step's digits.
    let digits = (-interval.log10().floor() + 1.0).clamp(0.0, 12.0) as i32;
    let tidy = |x: f64| {
        let scale = 10f64.powi(digits);
        (x * scale).round() / scale
    };
    Some(FittedAxis {
        min: tidy(min),
        max: tidy(max),
        interval: tidy(interval),
    })
}

/// The smallest round step (1, 2, 2.5 or 5 times a power of ten) at
/// least `raw`.
fn nice_step(raw: f64) -> f64 {
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// The value now by mint.
pub fn allocation_chart(report: &Report) -> Chart {
    let slices: Vec<DataPointItem> = report
        .allocation
        .iter()
        .map(|s| DataPointItem::new(s.usd.parse::<f64>().unwrap_or(0.0)).name(s.label.clone()))
        .collect();
    Chart::new()
        .tooltip(Tooltip::new().trigger(Trigger::Item))
        .legend(Legend::new().bottom("0"))
        .series(
            Pie::new()
                .name("Allocation (USD)")
                .radius(vec!["35%", "70%"])
                .data(slices),
        )
}

/// How big a node is drawn: by the USD that flowed through its edges, on
/// a log scale (a whale's counterparty does not swallow the chart), the
/// page's own wallet the largest. Shared with the portal's graph page.
pub fn node_size(usd: f64, own: bool) -> f64 {
    if own {
        36.0
    } else {
        (12.0 + usd.max(0.0).ln_1p() * 2.0).min(34.0)
    }
}

/// The counterparty graph: the wallet in the middle, edges sized by USD.
pub fn flow_chart(report: &Report) -> Chart {
    let categories = ["wallet", "counterparty", "program", "other"];
    let category_of = |kind: &str, category: &str| -> u64 {
        match (kind, category) {
            ("wallet", "self") => 0,
            ("program", _) => 2,
            ("other", _) => 3,
            _ => 1,
        }
    };
    let mut usd_by_node: std::collections::HashMap<&str, f64> = Default::default();
    for e in &report.flows.edges {
        let usd = e
            .usd
            .as_deref()
            .and_then(|u| u.parse::<f64>().ok())
            .unwrap_or(0.0);
        for id in [e.source.as_str(), e.target.as_str()] {
            *usd_by_node.entry(id).or_default() += usd;
        }
    }
    // The wallet in the middle and the others on a circle around it: the
    // force layout starts from these (from one shared point it has no
    // direction to push nodes apart and draws nothing).
    let others = report.flows.nodes.len().saturating_sub(1).max(1) as f64;
    let mut around = 0.0_f64;
    let nodes: Vec<GraphNode> = report
        .flows
        .nodes
        .iter()
        .map(|n| {
            let usd = usd_by_node.get(n.id.as_str()).copied().unwrap_or(0.0);
            let name = n.name.clone().unwrap_or_else(|| mint_label(&n.id));
            let own = n.id == report.address;
            let (x, y) = if own {
                (0.0, 0.0)
            } else {
                let angle = around / others * std::f64::consts::TAU;
                around += 1.0;
                (200.0 * angle.cos(), 200.0 * angle.sin())
            };
            GraphNode {
                id: n.id.clone(),
                name: if own { "this wallet".to_owned() } else { name },
                x,
                y,
                value: usd,
                category: category_of(&n.kind, &n.category),
                symbol_size: node_size(usd, own),
                label: None,
            }
        })
        .collect();
    let links: Vec<GraphLink> = report
        .flows
        .edges
        .iter()
        .map(|e| GraphLink {
            source: e.source.clone(),
            target: e.target.clone(),
            value: e.usd.as_deref().and_then(|u| u.parse::<f64>().ok()),
        })
        .collect();
    Chart::new()
        .tooltip(Tooltip::new())
        .legend(Legend::new().data(categories.to_vec()).bottom("0"))
        .series(
            Graph::new()
                .name("Counterparties")
                .layout(GraphLayout::Force)
                .force(GraphLayoutForce::new().edge_length(140.0).gravity(0.08))
                .roam(true)
                .label(Label::new().show(true).position(LabelPosition::Right))
                .edge_symbol(Some(("none".to_owned(), "arrow".to_owned())))
                .data(GraphData {
                    nodes,
                    links,
                    categories: categories
                        .iter()
                        .map(|c| GraphCategory {
                            name: (*c).to_owned(),
                        })
                        .collect(),
                }),
        )
}

#[cfg(test)]
mod tests {
    use super::{FittedAxis, fitted_axis};

    /// Every label ECharts prints: min, min + interval, …, max.
    fn labels(axis: FittedAxis) -> Vec<f64> {
        let n = ((axis.max - axis.min) / axis.interval).round() as i64;
        (0..=n)
            .map(|k| axis.min + k as f64 * axis.interval)
            .collect()
    }

    fn on_grid(x: f64, step: f64) -> bool {
        ((x / step).round() * step - x).abs() < step * 1e-9
    }

    #[test]
    fn the_value_axis_fits_the_data_instead_of_starting_at_zero() {
        // 82,000 to 93,000: a span of 11,000 padded 1,100 each side
        // (80,900 to 94,100, 13,200 wide); a fifth of that is 2,640,
        // whose round step is 5,000: 80,000 to 95,000.
        let axis = fitted_axis([82_000.0, 93_000.0, 88_500.0].into_iter()).unwrap();
        assert_eq!(
            axis,
            FittedAxis {
                min: 80_000.0,
                max: 95_000.0,
                interval: 5_000.0
            }
        );
        // Never below zero for a wallet that never was.
        assert_eq!(
            fitted_axis([0.0, 0.16].into_iter()).map(|a| a.min),
            Some(0.0)
        );
        // A flat series is padded by 5% of its level: 95 to 105, 10 wide,
        // steps of 2 (a fifth of 10): 94 to 106.
        let flat = fitted_axis([100.0, 100.0].into_iter()).unwrap();
        assert_eq!((flat.min, flat.max, flat.interval), (94.0, 106.0, 2.0));
        assert_eq!(fitted_axis(std::iter::empty()), None);
    }

    #[test]
    fn the_bounds_are_ticks_so_no_label_crowds_another() {
        // The report that printed 211,000 under 220,000 and 305,000 over
        // 300,000: 220,000 to 296,000 padded 7,600 each side is 212,400 to
        // 303,600; a fifth of its 91,200 is 18,240, round step 20,000.
        let axis = fitted_axis([220_000.0, 296_000.0].into_iter()).unwrap();
        assert_eq!(
            labels(axis),
            vec![
                200_000.0, 220_000.0, 240_000.0, 260_000.0, 280_000.0, 300_000.0, 320_000.0
            ]
        );
        for data in [
            vec![0.5, 0.52, 0.49],
            vec![1_234.56, 9_876.54],
            vec![-50.0, 75.0],
            vec![4_004.42, 85_526.32],
            vec![0.0, 0.0],
            vec![17.0],
        ] {
            let axis = fitted_axis(data.iter().copied()).unwrap();
            let lo = data.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = data.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert!(axis.min <= lo && axis.max >= hi, "{data:?}: {axis:?}");
            assert!(on_grid(axis.min, axis.interval), "{data:?}: {axis:?}");
            assert!(on_grid(axis.max, axis.interval), "{data:?}: {axis:?}");
            let n = labels(axis).len();
            assert!((3..=9).contains(&n), "{data:?}: {n} labels, {axis:?}");
        }
    }

    #[test]
    fn tooltips_are_drawn_on_the_canvas_not_as_html() {
        use charming::{Chart, element::Tooltip};
        let json = super::script_json(&Chart::new().tooltip(Tooltip::new()));
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["tooltip"]["renderMode"], "richText", "{json}");
    }
}
