//! A small model of the phone's `/system/bin/sh`: quoting, `;`, `&&`, `||`, simple redirections,
//! and the commands the driver runs.
//!
//! The shell sits over the commands: it splits a line, applies each simple command's
//! redirections to its [`Sink`] and hands the words to the one dispatch table,
//! `commands::run`. The services (`service.rs`) run it.

use crate::commands;
use crate::phone::{Request, SimPhone};
use crate::sink::{Sink, Target};

/// A token of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Semicolon,
    And,
    Or,
    Pipe,
}

/// Splits a command line into words and operators, honouring quotes and backslashes.
fn tokenize(line: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(inner) => word.push(inner),
                        None => return Err("syntax error: unterminated quoted string".to_string()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(escaped @ ('"' | '\\' | '$' | '`')) => word.push(escaped),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => {
                                return Err("syntax error: unterminated quoted string".to_string());
                            }
                        },
                        Some(inner) => word.push(inner),
                        None => return Err("syntax error: unterminated quoted string".to_string()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            ' ' | '\t' | '\n' => {
                if in_word {
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                if c == '\n' {
                    tokens.push(Token::Semicolon);
                }
            }
            ';' | '&' | '|' => {
                // `2>&1` keeps its ampersand inside the word.
                if c == '&' && word.ends_with('>') {
                    word.push(c);
                    in_word = true;
                    continue;
                }
                if in_word {
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                match c {
                    ';' => tokens.push(Token::Semicolon),
                    '&' if chars.peek() == Some(&'&') => {
                        chars.next();
                        tokens.push(Token::And);
                    }
                    '|' if chars.peek() == Some(&'|') => {
                        chars.next();
                        tokens.push(Token::Or);
                    }
                    '|' => tokens.push(Token::Pipe),
                    _ => return Err("syntax error: background jobs are not supported".to_string()),
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        tokens.push(Token::Word(word));
    }
    Ok(tokens)
}

/// Runs one shell command line and returns its exit status.
pub(crate) async fn run_line(phone: &SimPhone, line: &str, sink: &Sink) -> u8 {
    phone.record(Request::Command(line.to_string()));
    let tokens = match tokenize(line) {
        Ok(tokens) => tokens,
        Err(message) => {
            let _ = sink.err(format!("/system/bin/sh: {message}\n")).await;
            return 1;
        }
    };
    let mut status: u8 = 0;
    let mut words: Vec<String> = Vec::new();
    let mut skip = false;
    let mut pending: Vec<Token> = tokens;
    pending.push(Token::Semicolon);
    for token in pending {
        match token {
            Token::Word(word) => words.push(word),
            Token::Pipe => {
                let _ = sink
                    .err("/system/bin/sh: pipelines are not modelled by the simulator\n")
                    .await;
                return 2;
            }
            operator => {
                if !words.is_empty() && !skip {
                    status = run_simple(phone, std::mem::take(&mut words), sink).await;
                    if sink.is_closed() {
                        return status;
                    }
                }
                words.clear();
                skip = match operator {
                    Token::And => status != 0,
                    Token::Or => status == 0,
                    _ => false,
                };
            }
        }
    }
    status
}

/// Runs one simple command after applying its redirections.
async fn run_simple(phone: &SimPhone, words: Vec<String>, sink: &Sink) -> u8 {
    let mut command_sink = sink.clone();
    let mut args = Vec::with_capacity(words.len());
    let mut iter = words.into_iter();
    while let Some(word) = iter.next() {
        match word.as_str() {
            "2>&1" => command_sink.stderr_to = command_sink.stdout_to,
            "1>&2" | ">&2" => command_sink.stdout_to = command_sink.stderr_to,
            ">/dev/null" | "1>/dev/null" => command_sink.stdout_to = Target::Null,
            "2>/dev/null" => command_sink.stderr_to = Target::Null,
            ">" | "1>" | "2>" => {
                let target = iter.next().unwrap_or_default();
                if target != "/dev/null" {
                    let _ = sink
                        .err(format!(
                            "/system/bin/sh: can't create {target}: Read-only file system\n"
                        ))
                        .await;
                    return 1;
                }
                if word == "2>" {
                    command_sink.stderr_to = Target::Null;
                } else {
                    command_sink.stdout_to = Target::Null;
                }
            }
            _ => args.push(word),
        }
    }
    if args.is_empty() {
        return 0;
    }
    commands::run(phone, &args, &command_sink).await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_handles_quotes_and_operators() {
        let tokens = tokenize("logcat -d '*:W' ; date +%z&&echo \"a b\"").unwrap();
        assert_eq!(
            tokens,
            vec![
                Token::Word("logcat".into()),
                Token::Word("-d".into()),
                Token::Word("*:W".into()),
                Token::Semicolon,
                Token::Word("date".into()),
                Token::Word("+%z".into()),
                Token::And,
                Token::Word("echo".into()),
                Token::Word("a b".into()),
            ]
        );
    }

    #[test]
    fn redirection_keeps_its_ampersand() {
        let tokens = tokenize("x 2>&1").unwrap();
        assert_eq!(
            tokens,
            vec![Token::Word("x".into()), Token::Word("2>&1".into())]
        );
    }

    #[test]
    fn unterminated_quote_is_an_error() {
        assert!(tokenize("echo 'abc").is_err());
    }
}
