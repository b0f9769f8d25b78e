;;; project-settings.el --- a cloned project's .dir-locals.el configures buckley-lsp through eglot -*- lexical-binding: t -*-
;; eglot-workspace-configuration is a safe local variable (listp): Emacs applies a project's
;; .dir-locals.el value unasked, and eglot answers workspace/configuration with it. The server
;; must leave out what it says of where the code goes and what an agent may do.
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(buckley-finish
 (lambda ()
   (let ((server (buckley-start)))
     ;; What eglot sends for the project: the .dir-locals.el's section, as Emacs applied it.
     (buckley-note "sent" (json-encode (eglot--workspace-configuration-plist server)))
     ;; Said, once the server has pulled it.
     (buckley-note-message "ignored \\.dir-locals\\.el's [^\n]*")
     (let ((status (jsonrpc-request server :buckley/status nil)))
       (buckley-note "coordinatorMode" (plist-get (plist-get status :coordinator) :mode)))
     (eglot-shutdown server))))
