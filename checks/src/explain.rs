//! The narrative of a counterexample: numbered kernel steps, then the
//! property that fails and the values that break it, every line ≤ 72
//! columns. The words come from the model (`Spec::describe`, `Spec::why`);
//! numbering and wrapping are here.

use wbspec_models::spec::Spec;

/// Numbered kernel-terms narrative of a path, ≤ 72 columns per line.
pub fn narrate<M: Spec>(m: &M, states: &[M::State], actions: &[M::Action]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let who = format!("{:<13}", m.actor_label(a));
        let what = m.describe(&states[i], &states[i + 1], a);
        out.extend(wrap(&format!("{:>2} {who} ", i + 1), &what, 72));
    }
    out
}

/// The full narrative: steps, the failing property, the values.
pub fn explain<M: Spec>(
    m: &M,
    states: &[M::State],
    actions: &[M::Action],
    prop: &str,
    description: &str,
) -> Vec<String> {
    let mut out = narrate(m, states, actions);
    out.extend(wrap(
        "=> ",
        &format!("{prop} fails at step {}: {description}", actions.len()),
        72,
    ));
    for w in m.why(states, actions, prop) {
        out.extend(wrap("   ", &w, 72));
    }
    out
}

/// Wraps `text` after `head` at `width` columns; continuation lines are
/// indented under the text. Breaks at spaces; a word longer than a line
/// is cut into pieces that fit (at character boundaries), so no line is
/// ever longer than `width` when `head` leaves at least 20 columns.
pub fn wrap(head: &str, text: &str, width: usize) -> Vec<String> {
    let indent = " ".repeat(head.chars().count());
    let room = width.saturating_sub(indent.len()).max(20);
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ').flat_map(|w| split_long(w, room)) {
        let add = if cur.is_empty() {
            word.len()
        } else {
            cur.len() + 1 + word.len()
        };
        if add > room && !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{head}{l}")
            } else {
                format!("{indent}{l}")
            }
        })
        .collect()
}

/// `word` in pieces of at most `room` bytes, cut at character boundaries.
fn split_long(word: &str, room: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = word;
    while rest.len() > room {
        let mut cut = room;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut == 0 {
            break;
        }
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out.push(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn long_words_are_cut_to_fit() {
        let long = format!("see {} and ünïcödé{}", "x".repeat(150), "é".repeat(60));
        for head in ["", "Question:  ", "  "] {
            let lines = wrap(head, &long, 72);
            assert!(lines.len() >= 3, "{lines:?}");
            for l in &lines {
                assert!(l.chars().count() <= 72, "{l}");
            }
            let joined: String = lines.concat().chars().filter(|c| *c != ' ').collect();
            let want: String = format!("{head}{long}")
                .chars()
                .filter(|c| *c != ' ')
                .collect();
            assert_eq!(joined, want, "nothing lost");
        }
    }
}
