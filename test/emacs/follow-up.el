;;; follow-up.el --- a conversation in the answer document -*- lexical-binding: t -*-
;; "Buckley: explain this" opens the answer document (window/showDocument); eglot manages it too
;; (the README's block covers text-mode); the user writes a question below its last line and runs
;; "Buckley: follow up «…»" there; the answer is appended to that buffer.
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(buckley-finish
 (lambda ()
   ;; As markdown-mode (a text-mode) has it; Emacs -Q opens .md in fundamental-mode.
   (add-to-list 'auto-mode-alist '("\\.md\\'" . text-mode))
   (let* ((server (buckley-start))
          (lines (buckley-select-backoff)))
     (buckley-run-code-action server (car lines) (cdr lines) "Buckley: explain this")
     (let ((document (buckley-wait "the answer document" #'buckley-answer-document)))
       (with-current-buffer document
         (buckley-note "mode" (symbol-name major-mode))
         (buckley-wait "eglot to manage the answer document" #'eglot-current-server)
         (buckley-note "same_server" (eq (eglot-current-server) server))
         (goto-char (point-max))
         (insert "RECALL what came before\n")
         ;; Sent before the request, as eglot's own requests do (the helper calls jsonrpc directly).
         (eglot--signal-textDocument/didChange)
         (buckley-run-code-action server (point-max) (point-max) "Buckley: follow up «RECALL what came before»")
         (buckley-wait "the answer appended" (lambda () (save-excursion (goto-char (point-min)) (search-forward "recall:" nil t))))
         (buckley-note "documentText" (buffer-string))
         (buckley-note "modified" (buffer-modified-p))))
     (eglot-shutdown server))))
