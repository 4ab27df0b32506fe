//! jdb-rs's session as the expression evaluator's host (`jdb_expr`): the current frame is the
//! context, and events that arrive while an expression invokes a method are reported and resumed.

use std::future::Future;

use jdb_expr::eval::{Ctx, Evaluator, Host, Val};
use jdb_expr::parser::parse;
use jdi::Value;

use crate::session::Session;

impl Host for Session {
    /// Runs an invocation while handling the events it causes: an event set that arrives
    /// meanwhile (a breakpoint in the invoked code) is reported and resumed, so the call can end.
    async fn while_invoking<T>(&mut self, fut: impl Future<Output = jdi::Result<T>>) -> Result<T, String> {
        tokio::pin!(fut);
        loop {
            let Some(conn) = self.conn.as_mut() else { return Err("No VM connected".into()) };
            tokio::select! {
                r = &mut fut => return r.map_err(jdb_expr::eval::jdi_err),
                set = conn.next_set() => match set {
                    Some(Ok(set)) => {
                        if !set.is_vm_death() {
                            self.out.line("(an event during the method invocation was skipped)");
                            let _ = set.resume().await;
                        }
                    }
                    _ => return Err("The VM disconnected during the method invocation".into()),
                },
            }
        }
    }
}

impl Session {
    /// The context of the current frame (or of no frame, for static references).
    pub(crate) async fn eval_ctx(&self) -> Result<Ctx, String> {
        let vm = self.vm().cloned().ok_or("No VM connected")?;
        let frame = match self.position.thread() {
            Some(_) => self.current_frame().await.unwrap_or(None),
            None => None,
        };
        Ok(Ctx { vm, thread: self.position.thread().cloned(), frame })
    }

    /// Parses and evaluates `src`.
    pub(crate) async fn evaluate(&mut self, src: &str) -> Result<(Val, Ctx), String> {
        let expr = parse(src)?;
        let ctx = self.eval_ctx().await?;
        let v = Evaluator::new(self).eval(&ctx, &expr).await?;
        Ok((v, ctx))
    }

    /// The value as `print` shows it (see [`Evaluator::massaged`]).
    pub(crate) async fn massaged(&mut self, ctx: &Ctx, v: &Value) -> Result<String, String> {
        Evaluator::new(self).massaged(ctx, v).await
    }
}
