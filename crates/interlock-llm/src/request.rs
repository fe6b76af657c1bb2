//! A chat request read into what the model will read.
//!
//! Every text a model sees counts, not only the last user turn: a system
//! prompt, earlier turns, and above all tool results fed back to the model
//! (where an injection planted in a web page or a file arrives). Content the
//! scan cannot read (an image, audio) is named, not skipped silently.

use serde_json::Value;

/// Whose wire format a request is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI's `POST /v1/chat/completions` (and every provider that speaks
    /// it: Groq, Ollama, Gemini's OpenAI endpoint, vLLM…).
    OpenAi,
    /// Anthropic's `POST /v1/messages`.
    Anthropic,
    /// Google's Gemini API, `POST /v1beta/models/{model}:generateContent`
    /// (`:streamGenerateContent?alt=sse` streamed): the model and whether it
    /// streams are in the path, not the body ([`ChatRequest::parse_gemini`]).
    Gemini,
}

/// Who wrote a part of the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool's result fed back to the model.
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    fn parse(s: &str) -> Option<Role> {
        match s {
            "system" | "developer" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" | "function" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// One text the model will read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub role: Role,
    /// Where it sits in the request (`$.messages[2].content[0].text`).
    pub path: String,
    pub text: String,
}

/// A chat request as the scan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatRequest {
    pub format: WireFormat,
    pub model: String,
    pub stream: bool,
    pub parts: Vec<Part>,
    /// Content kinds the scan could not read (`image_url`, `input_audio`),
    /// by path: recorded with the verdict.
    pub unread: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    #[error("the request body is not JSON: {0}")]
    NotJson(String),
    #[error("the request has no `model` string")]
    NoModel,
    #[error("the request has no `messages` list")]
    NoMessages,
    #[error("the request has no `contents` list")]
    NoContents,
    #[error("{path}: {what}")]
    Malformed { path: String, what: String },
}

impl ChatRequest {
    /// Reads `body` in `format` (OpenAI's or Anthropic's; a Gemini request
    /// names its model in its path: [`ChatRequest::parse_gemini`]).
    pub fn parse(format: WireFormat, body: &[u8]) -> Result<ChatRequest, RequestError> {
        if format == WireFormat::Gemini {
            return Err(RequestError::NoModel);
        }
        let v: Value =
            serde_json::from_slice(body).map_err(|e| RequestError::NotJson(e.to_string()))?;
        let model = v
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .ok_or(RequestError::NoModel)?
            .to_owned();
        let stream = v.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let messages = v
            .get("messages")
            .and_then(Value::as_array)
            .ok_or(RequestError::NoMessages)?;
        let mut req = ChatRequest {
            format,
            model,
            stream,
            parts: Vec::new(),
            unread: Vec::new(),
        };
        if format == WireFormat::Anthropic
            && let Some(system) = v.get("system")
        {
            req.content(Role::System, "$.system", system)?;
        }
        for (i, m) in messages.iter().enumerate() {
            let path = format!("$.messages[{i}]");
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .and_then(Role::parse)
                .ok_or_else(|| RequestError::Malformed {
                    path: path.clone(),
                    what: "no known `role`".into(),
                })?;
            if let Some(content) = m.get("content") {
                req.content(role, &format!("{path}.content"), content)?;
            }
            // OpenAI: the arguments an assistant turn passed to tools.
            if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                for (j, c) in calls.iter().enumerate() {
                    if let Some(args) = c.pointer("/function/arguments").and_then(Value::as_str) {
                        req.text(
                            role,
                            format!("{path}.tool_calls[{j}].function.arguments"),
                            args,
                        );
                    }
                }
            }
        }
        Ok(req)
    }

    /// Reads a Gemini `generateContent` body for `model` (from its path):
    /// `systemInstruction`, then each of `contents` — a `user` or `model`
    /// turn of parts: `text`, a `functionCall`'s arguments, a
    /// `functionResponse` (a tool's result fed back), code and its result;
    /// inline and file data are named as unread.
    pub fn parse_gemini(
        model: &str,
        stream: bool,
        body: &[u8],
    ) -> Result<ChatRequest, RequestError> {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| RequestError::NotJson(e.to_string()))?;
        if model.is_empty() {
            return Err(RequestError::NoModel);
        }
        let contents = v
            .get("contents")
            .and_then(Value::as_array)
            .ok_or(RequestError::NoContents)?;
        let mut req = ChatRequest {
            format: WireFormat::Gemini,
            model: model.to_owned(),
            stream,
            parts: Vec::new(),
            unread: Vec::new(),
        };
        for key in ["systemInstruction", "system_instruction"] {
            if let Some(system) = v.get(key) {
                req.gemini_parts(Role::System, &format!("$.{key}"), system)?;
            }
        }
        for (i, c) in contents.iter().enumerate() {
            let path = format!("$.contents[{i}]");
            let role = match c.get("role").and_then(Value::as_str) {
                None | Some("user") => Role::User,
                Some("model") => Role::Assistant,
                Some("function" | "tool") => Role::Tool,
                Some(_) => {
                    return Err(RequestError::Malformed {
                        path,
                        what: "no known `role` (user or model)".into(),
                    });
                }
            };
            req.gemini_parts(role, &path, c)?;
        }
        Ok(req)
    }

    /// A Gemini `Content`'s `parts`.
    fn gemini_parts(
        &mut self,
        role: Role,
        path: &str,
        content: &Value,
    ) -> Result<(), RequestError> {
        let Some(parts) = content.get("parts") else {
            return Ok(());
        };
        let parts = parts.as_array().ok_or_else(|| RequestError::Malformed {
            path: format!("{path}.parts"),
            what: "`parts` is not a list".into(),
        })?;
        for (j, part) in parts.iter().enumerate() {
            let at = format!("{path}.parts[{j}]");
            let o = part.as_object().ok_or_else(|| RequestError::Malformed {
                path: at.clone(),
                what: "a part is not an object".into(),
            })?;
            if let Some(t) = o.get("text").and_then(Value::as_str) {
                self.text(role, format!("{at}.text"), t);
            } else if let Some(call) = o.get("functionCall") {
                let args = call.get("args").map(Value::to_string).unwrap_or_default();
                self.text(role, format!("{at}.functionCall.args"), &args);
            } else if let Some(r) = o.get("functionResponse") {
                let response = r.get("response").map(Value::to_string).unwrap_or_default();
                self.text(
                    Role::Tool,
                    format!("{at}.functionResponse.response"),
                    &response,
                );
            } else if let Some(code) = part.pointer("/executableCode/code").and_then(Value::as_str)
            {
                self.text(role, format!("{at}.executableCode.code"), code);
            } else if let Some(out) = part
                .pointer("/codeExecutionResult/output")
                .and_then(Value::as_str)
            {
                self.text(Role::Tool, format!("{at}.codeExecutionResult.output"), out);
            } else if o.contains_key("thought") || o.contains_key("thoughtSignature") {
                // The model's own thinking handed back: nothing new to it.
            } else {
                let kind = o.keys().next().map_or("empty", String::as_str);
                self.unread.push(format!("{at} ({kind})"));
            }
        }
        Ok(())
    }

    /// Every text, joined by newlines (what the length limit counts).
    pub fn total_chars(&self) -> usize {
        self.parts.iter().map(|p| p.text.chars().count()).sum()
    }

    fn text(&mut self, role: Role, path: String, text: &str) {
        if !text.is_empty() {
            self.parts.push(Part {
                role,
                path,
                text: text.to_owned(),
            });
        }
    }

    /// A message's `content`: a string, or a list of blocks.
    fn content(&mut self, role: Role, path: &str, content: &Value) -> Result<(), RequestError> {
        match content {
            Value::Null => Ok(()),
            Value::String(s) => {
                self.text(role, path.to_owned(), s);
                Ok(())
            }
            Value::Array(blocks) => {
                for (i, b) in blocks.iter().enumerate() {
                    self.block(role, &format!("{path}[{i}]"), b)?;
                }
                Ok(())
            }
            _ => Err(RequestError::Malformed {
                path: path.to_owned(),
                what: "`content` is neither a string nor a list".into(),
            }),
        }
    }

    /// One content block of either format.
    fn block(&mut self, role: Role, path: &str, b: &Value) -> Result<(), RequestError> {
        let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" | "input_text" => {
                let text = b.get("text").and_then(Value::as_str).ok_or_else(|| {
                    RequestError::Malformed {
                        path: path.to_owned(),
                        what: "a text block without `text`".into(),
                    }
                })?;
                self.text(role, format!("{path}.text"), text);
            }
            // Anthropic: a tool's result fed back (a string or blocks).
            "tool_result" => {
                if let Some(c) = b.get("content") {
                    self.content(Role::Tool, &format!("{path}.content"), c)?;
                }
            }
            // Anthropic: the input an assistant turn gave a tool.
            "tool_use" => {
                if let Some(input) = b.get("input") {
                    self.text(role, format!("{path}.input"), &input.to_string());
                }
            }
            "thinking" | "redacted_thinking" => {}
            other => self.unread.push(format!("{path} ({other})")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_openai_request_yields_every_turn_and_tool_result() {
        let body = br#"{"model":"gpt-4o","stream":true,"messages":[
            {"role":"system","content":"Be brief."},
            {"role":"user","content":[{"type":"text","text":"Summarize"},{"type":"image_url","image_url":{"url":"data:"}}]},
            {"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"fetch","arguments":"{\"url\":\"x\"}"}}]},
            {"role":"tool","tool_call_id":"1","content":"page text"}]}"#;
        let r = ChatRequest::parse(WireFormat::OpenAi, body).unwrap();
        assert_eq!(r.model, "gpt-4o");
        assert!(r.stream);
        let texts: Vec<(Role, &str)> = r.parts.iter().map(|p| (p.role, p.text.as_str())).collect();
        assert_eq!(
            texts,
            [
                (Role::System, "Be brief."),
                (Role::User, "Summarize"),
                (Role::Assistant, "{\"url\":\"x\"}"),
                (Role::Tool, "page text"),
            ]
        );
        assert_eq!(r.parts[1].path, "$.messages[1].content[0].text");
        assert_eq!(r.unread, ["$.messages[1].content[1] (image_url)"]);
    }

    #[test]
    fn an_anthropic_request_yields_its_system_and_tool_results() {
        let body = br#"{"model":"claude-sonnet-4","max_tokens":10,"system":[{"type":"text","text":"Rules."}],
            "messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"file text"}]}]}]}"#;
        let r = ChatRequest::parse(WireFormat::Anthropic, body).unwrap();
        assert!(!r.stream);
        assert_eq!(r.parts[0].role, Role::System);
        assert_eq!(r.parts[1].role, Role::Tool);
        assert_eq!(r.parts[1].text, "file text");
    }

    #[test]
    fn a_gemini_request_yields_its_system_turns_and_function_responses() {
        let body = br#"{"systemInstruction":{"parts":[{"text":"Rules."}]},
            "contents":[{"role":"user","parts":[{"text":"Summarize"},{"inlineData":{"mimeType":"image/png","data":"AA=="}}]},
            {"role":"model","parts":[{"functionCall":{"name":"fetch","args":{"url":"x"}}}]},
            {"role":"user","parts":[{"functionResponse":{"name":"fetch","response":{"text":"page"}}}]}],
            "generationConfig":{"temperature":0.2}}"#;
        let r = ChatRequest::parse_gemini("gemini-2.5-flash", true, body).unwrap();
        assert_eq!((r.model.as_str(), r.stream), ("gemini-2.5-flash", true));
        let texts: Vec<(Role, &str)> = r.parts.iter().map(|p| (p.role, p.text.as_str())).collect();
        assert_eq!(
            texts,
            [
                (Role::System, "Rules."),
                (Role::User, "Summarize"),
                (Role::Assistant, "{\"url\":\"x\"}"),
                (Role::Tool, "{\"text\":\"page\"}"),
            ]
        );
        assert_eq!(r.unread, ["$.contents[0].parts[1] (inlineData)"]);
        assert_eq!(
            ChatRequest::parse_gemini("m", false, br#"{"prompt":"x"}"#),
            Err(RequestError::NoContents)
        );
        assert!(matches!(
            ChatRequest::parse_gemini(
                "m",
                false,
                br#"{"contents":[{"role":"wizard","parts":[]}]}"#
            ),
            Err(RequestError::Malformed { .. })
        ));
    }

    #[test]
    fn malformed_requests_get_errors_that_say_where() {
        let p = |b: &[u8]| ChatRequest::parse(WireFormat::OpenAi, b);
        assert!(matches!(p(b"{"), Err(RequestError::NotJson(_))));
        assert_eq!(p(br#"{"messages":[]}"#), Err(RequestError::NoModel));
        assert_eq!(p(br#"{"model":"m"}"#), Err(RequestError::NoMessages));
        assert_eq!(
            p(br#"{"model":"m","messages":[{"role":"wizard","content":"x"}]}"#),
            Err(RequestError::Malformed {
                path: "$.messages[0]".into(),
                what: "no known `role`".into()
            })
        );
        assert!(matches!(
            p(br#"{"model":"m","messages":[{"role":"user","content":7}]}"#),
            Err(RequestError::Malformed { .. })
        ));
    }
}
