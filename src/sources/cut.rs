//! Cutting text by tokens at line boundaries, shared by the tool-output and attachment guards.

use crate::tokens::{self, Encoding};

/// End of the longest run of whole lines from the start within `budget` tokens; inside the first
/// line (on a char boundary) when even that line does not fit.
pub fn cut_head(encoding: Encoding, text: &str, budget: usize) -> usize {
    if budget == 0 {
        return 0;
    }
    let mut used = 0;
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        let n = tokens::count(encoding, line);
        if used + n > budget {
            if end == 0 {
                return tokens::head_offset(encoding, line, budget).unwrap_or(0);
            }
            break;
        }
        used += n;
        end += line.len();
    }
    end
}

/// Start of the longest run of whole lines at the end within `budget` tokens; inside the last
/// line (on a char boundary) when even that line does not fit.
pub fn cut_tail(encoding: Encoding, text: &str, budget: usize) -> usize {
    if budget == 0 {
        return text.len();
    }
    let mut used = 0;
    let mut start = text.len();
    for line in text.split_inclusive('\n').rev() {
        let n = tokens::count(encoding, line);
        if used + n > budget {
            if start == text.len() {
                let line_start = text.len() - line.len();
                return line_start + tokens::tail_offset(encoding, line, budget).unwrap_or(line.len());
            }
            break;
        }
        used += n;
        start -= line.len();
    }
    start
}
