//! The values of a set-based label selector requirement (`zone in (a,b)`), parsed as labels'
//! parser does (`staging/src/k8s.io/apimachinery/pkg/labels/selector.go`: the lexer in the
//! values context, `parseValues`, `parseIdentifiersList`), with its words when it fails.

/// A token of labels' lexer in the values context (`selector.go`'s `Lexer`): a parenthesis,
/// a comma, an operator, an identifier (where `in` and `notin` are identifiers too), or the
/// end, whose literal is empty.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Open,
    Close,
    Comma,
    Operator(&'a str),
    Identifier(&'a str),
    End,
}

impl Token<'_> {
    fn literal(&self) -> &str {
        match self {
            Token::Open => "(",
            Token::Close => ")",
            Token::Comma => ",",
            Token::Operator(text) | Token::Identifier(text) => text,
            Token::End => "",
        }
    }
}

/// `isSpecialSymbol`.
fn special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while let Some(c) = rest.chars().next() {
        let length = match c {
            '(' | ')' | ',' => 1,
            c if special(c) => rest
                .find(|c: char| !special(c) || "(),".contains(c))
                .unwrap_or(rest.len()),
            _ => rest
                .find(|c: char| c.is_whitespace() || special(c))
                .unwrap_or(rest.len()),
        };
        let (literal, tail) = rest.split_at(length);
        out.push(match literal {
            "(" => Token::Open,
            ")" => Token::Close,
            "," => Token::Comma,
            text if text.starts_with(special) => Token::Operator(text),
            text => Token::Identifier(text),
        });
        rest = tail.trim_start();
    }
    out.push(Token::End);
    out
}

/// `parseValues`: `(`, then `)` (one empty value) or `parseIdentifiersList` and `)`.
pub(crate) fn set_values(rest: &str) -> Result<Vec<String>, String> {
    let fail = |message: String| format!("unable to parse requirement: {message}");
    let tokens = tokens(rest);
    if tokens[0] != Token::Open {
        return Err(fail(format!(
            "found '{}' expected: '('",
            tokens[0].literal()
        )));
    }
    match tokens[1] {
        Token::Identifier(_) | Token::Comma => {
            let (values, next) = identifiers_list(&tokens, 1).map_err(fail)?;
            if tokens[next] != Token::Close {
                return Err(fail(format!(
                    "found '{}', expected: ')'",
                    tokens[1].literal()
                )));
            }
            Ok(values)
        }
        Token::Close => Ok(vec![String::new()]),
        other => Err(fail(format!(
            "found '{}', expected: ',', ')' or identifier",
            other.literal()
        ))),
    }
}

/// `parseIdentifiersList` from `tokens[at]`: the values (an empty one where commas leave
/// one) and where the closing parenthesis is.
fn identifiers_list(tokens: &[Token<'_>], mut at: usize) -> Result<(Vec<String>, usize), String> {
    let mut values: Vec<String> = Vec::new();
    let insert = |values: &mut Vec<String>, value: &str| {
        if !values.iter().any(|v| v == value) {
            values.push(value.to_string());
        }
    };
    loop {
        let token = tokens[at];
        at += 1;
        match token {
            Token::Identifier(value) => {
                insert(&mut values, value);
                match tokens[at] {
                    Token::Comma => {}
                    Token::Close => return Ok((values, at)),
                    other => {
                        return Err(format!("found '{}', expected: ',' or ')'", other.literal()));
                    }
                }
            }
            Token::Comma => {
                if values.is_empty() {
                    insert(&mut values, "");
                }
                match tokens[at] {
                    Token::Close => {
                        insert(&mut values, "");
                        return Ok((values, at));
                    }
                    Token::Comma => {
                        at += 1;
                        insert(&mut values, "");
                    }
                    _ => {}
                }
            }
            other => {
                return Err(format!(
                    "found '{}', expected: ',', or identifier",
                    other.literal()
                ));
            }
        }
    }
}
