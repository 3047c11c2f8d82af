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
fn script_json(chart: &Chart) -> String {
    serde_json::to_string(chart)
        .unwrap_or_else(|_| "{}".to_owned())
        .replace('<', "\\u003c")
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
    if let Some((min, max)) = fitted_axis(values.iter().flatten().copied()) {
        y = y.min(min).max(max);
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

/// The value axis fitted to the data rather than drawn from zero, so a
/// swing from 82,000 to 93,000 reads as the 13% it is: the data's range
/// padded by a tenth of it on each side, rounded out to the padding's
/// power of ten; never below zero for values that are not, and a flat
/// series padded by 5% of its level. `None` without finite values.
pub fn fitted_axis(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
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
    let step = 10f64.powf(pad.log10().floor());
    let mut min = ((lo - pad) / step).floor() * step;
    if lo >= 0.0 && min < 0.0 {
        min = 0.0;
    }
    let max = ((hi + pad) / step).ceil() * step;
    Some((min, max))
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
                symbol_size: if own {
                    36.0
                } else {
                    (12.0 + usd.max(0.0).ln_1p() * 2.0).min(34.0)
                },
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
    use super::fitted_axis;

    #[test]
    fn the_value_axis_fits_the_data_instead_of_starting_at_zero() {
        // 82,000 to 93,000: a span of 11,000, padded 1,100 each side
        // (80,900 to 94,100), rounded out to thousands.
        assert_eq!(
            fitted_axis([82_000.0, 93_000.0, 88_500.0].into_iter()),
            Some((80_000.0, 95_000.0))
        );
        // Never below zero for a wallet that never was.
        assert_eq!(fitted_axis([0.0, 0.16].into_iter()).map(|a| a.0), Some(0.0));
        // A flat series is padded by 5% of its level: 100 ± 5.
        assert_eq!(fitted_axis([100.0, 100.0].into_iter()), Some((95.0, 105.0)));
        assert_eq!(fitted_axis(std::iter::empty()), None);
    }
}
