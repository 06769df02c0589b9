#include "views/view.h"

namespace atlas {

View::View(QWidget *parent)
    : QWidget(parent)
{
}

void View::setInput(const ViewInput &input)
{
    m_input = input;
    refresh();
}

void View::setSpec(const ViewSpec &spec)
{
    m_spec = spec;
    refresh();
}

} // namespace atlas
