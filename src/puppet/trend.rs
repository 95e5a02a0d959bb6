//! What the runs seen so far say, at one moment: [`RunTrend`], which
//! [`super::runs::RunHistory`] computes and [`super::state::PuppetState`]
//! carries to the objects and the notifier.
//!
//! The value has a file of its own because both of those name it: the
//! history is fed states, a state carries the trend, so in either file it
//! would make the two lean on each other.

/// Longest [`RunTrend::loop_text`], in octets (a `DisplayString`).
pub const MAX_LOOP_TEXT: usize = 255;

/// What the runs seen so far say, at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunTrend {
    /// K: how many changing runs in a row are not converging.
    pub converge_runs: u32,
    /// Runs seen since the subagent started (the one found at start-up
    /// included).
    pub observed: u64,
    /// The last runs that each changed resources, in a row (0 when the
    /// last run changed nothing, or no run was seen).
    pub changing_runs: u32,
    /// Runs that ended within the hour before the trend was taken.
    pub last_hour: u32,
    /// Seconds between the ends of the last two runs seen (0 if the clock
    /// went back).
    pub interval: Option<u64>,
    /// While `changing_runs >= converge_runs`: the resources (`Type[title]`)
    /// that changed in each of the last `converge_runs` runs, in the order
    /// of the last run's report. Empty otherwise.
    pub loop_resources: Vec<String>,
}

impl RunTrend {
    /// K runs in a row changed resources.
    pub fn not_converging(&self) -> bool {
        self.converge_runs > 0 && self.changing_runs >= self.converge_runs
    }

    /// The loop's resources as one `DisplayString`: whole names joined by
    /// `, `; when they do not all fit in [`MAX_LOOP_TEXT`] octets, as many
    /// as fit and then ` (+N more)`. A single name longer than that is cut
    /// and ends with `...`.
    pub fn loop_text(&self) -> String {
        join_within(&self.loop_resources, MAX_LOOP_TEXT)
    }
}

fn join_within(names: &[String], max: usize) -> String {
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        let sep = if out.is_empty() { "" } else { ", " };
        let rest = names.len() - i - 1;
        // Room for the name, and for the note of what follows if anything does.
        let note = if rest > 0 {
            format!(" (+{rest} more)").len()
        } else {
            0
        };
        if out.len() + sep.len() + name.len() + note <= max {
            out.push_str(sep);
            out.push_str(name);
            continue;
        }
        if out.is_empty() {
            // Not even the first name fits: cut it at a character boundary.
            let more = format!(" (+{rest} more)");
            let more = if rest > 0 { more.as_str() } else { "" };
            let mut end = max.saturating_sub(3 + more.len());
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            out.push_str(&name[..end]);
            out.push_str("...");
            out.push_str(more);
            return out;
        }
        out.push_str(&format!(" (+{} more)", names.len() - i));
        return out;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_text_is_cut_between_names() {
        let names: Vec<String> = (0..40)
            .map(|i| format!("File[/etc/app/conf-{i}]"))
            .collect();
        let text = join_within(&names, MAX_LOOP_TEXT);
        assert!(text.len() <= MAX_LOOP_TEXT, "{}", text.len());
        assert!(text.starts_with("File[/etc/app/conf-0], File[/etc/app/conf-1]"));
        let shown = text.matches("File[").count();
        assert!(
            text.ends_with(&format!(" (+{} more)", 40 - shown)),
            "{text}"
        );
        assert_eq!(
            join_within(&names[..2], 255),
            "File[/etc/app/conf-0], File[/etc/app/conf-1]"
        );
        let long = vec![
            "Exec[".to_string() + &"é".repeat(300) + "]",
            "Notify[x]".into(),
        ];
        let text = join_within(&long, MAX_LOOP_TEXT);
        assert!(text.len() <= MAX_LOOP_TEXT);
        assert!(text.ends_with("... (+1 more)"), "{text}");
        assert_eq!(join_within(&[], 255), "");
    }
}
